package main

//go:generate go run ../../cmd/vigen gen -o logreg logreg.vi
