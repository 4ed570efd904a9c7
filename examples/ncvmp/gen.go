package main

//go:generate go run ../../cmd/vigen gen -o ncvmp ncvmp.vi
