package main

//go:generate go run ../../cmd/vigen gen -o ctm ctm.vi
