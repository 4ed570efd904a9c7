package main

//go:generate go run ../../cmd/vigen gen -methods delta -o logreg logreg.vi
