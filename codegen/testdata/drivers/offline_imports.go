// offline_imports imports the vigen runtime and gonum and uses both: it
// builds in a tempModule with the network off only if everything they
// need is in the module cache and go.sum.
package main

import (
	"fmt"

	"github.com/vigen-go/vigen/runtime"
	"gonum.org/v1/gonum/mat"
)

func main() { fmt.Println(runtime.Version > 0, mat.NewDense(1, 1, nil).RawMatrix().Rows) }
