package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/vigen-go/vigen/runtime"
	"github.com/vigen-go/vigen/spec"
)

// cmdFmt formats .vi files: to stdout, or with -w in place (through a
// temporary file and a rename, and only when the text changes). With -l it
// lists the files whose formatting differs instead.
func cmdFmt(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fmt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	write := fs.Bool("w", false, "write the result to the file instead of stdout")
	list := fs.Bool("l", false, "list the files whose formatting differs")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	status := 0
	for _, path := range fs.Args() {
		src, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(stderr, "vigen:", err)
			status = 1
			continue
		}
		out, err := spec.Format(path, src)
		if err != nil {
			fmt.Fprintln(stderr, err)
			status = 1
			continue
		}
		changed := !bytes.Equal(out, src)
		switch {
		case *list:
			if changed {
				fmt.Fprintln(stdout, path)
			}
		case *write:
			if changed {
				if err := runtime.WriteFileAtomic(path, out); err != nil {
					fmt.Fprintln(stderr, "vigen:", err)
					status = 1
				}
			}
		default:
			stdout.Write(out)
		}
	}
	return status
}
