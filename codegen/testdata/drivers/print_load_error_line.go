// print_load_error_line loads the data on stdin and prints the error, or
// <nil>, on a line.
package main

import (
	"fmt"
	"os"

	model "tmpe2e/PKG"
)

func main() {
	_, err := model.LoadData(os.Stdin)
	fmt.Println(err)
}
