package main

//go:generate go run ../../cmd/vigen gen -o schoolreg schoolreg.vi
