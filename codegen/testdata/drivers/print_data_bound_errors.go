// print_data_bound_errors loads three data sets, the first within the
// declared bounds, and prints the error of LoadData or NewModel for each,
// or <nil>.
package main

import (
	"fmt"
	"os"
	"strings"

	model "tmpe2e/PKG"
)

func main() {
	for _, d := range []string{
		`{"N": 3, "y": [1, 2, 0.5], "w": [0, 0.5, 0.2]}`,
		`{"N": 3, "y": [1, 2, -0.5], "w": [0, 0.5, 0.2]}`,
		`{"N": 3, "y": [1, 2, 0.5], "w": [0, 1.5, 0.2]}`,
	} {
		data, err := model.LoadData(strings.NewReader(d))
		if err == nil {
			_, err = model.NewModel(data)
		}
		fmt.Println(err)
	}
	_ = os.Stdout
}
