// print_load_error loads the data on stdin and prints the error, or <nil>.
package main

import (
	"fmt"
	"os"

	model "tmpe2e/PKG"
)

func main() {
	_, err := model.LoadData(os.Stdin)
	fmt.Print(err)
}
