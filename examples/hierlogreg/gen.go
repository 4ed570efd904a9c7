package main

//go:generate go run ../../cmd/vigen gen -o hierlogreg hierlogreg.vi
