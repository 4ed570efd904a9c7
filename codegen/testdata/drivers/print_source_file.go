// print_source_file imports the generated package and prints the file
// name its own source was compiled from.
package main

import (
	"fmt"
	"runtime"

	model "tmpe2e/PKG"
)

var _ = model.LoadData

func main() {
	_, file, _, _ := runtime.Caller(0)
	fmt.Print(file)
}
