package main

//go:generate go run ../../cmd/vigen gen -o ar2 ar2.vi
