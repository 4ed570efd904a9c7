package main

//go:generate go run ../../cmd/vigen gen -o pumps pumps.vi
