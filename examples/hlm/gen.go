package main

//go:generate go run ../../cmd/vigen gen -o hlm hlm.vi
