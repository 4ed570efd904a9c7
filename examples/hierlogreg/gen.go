package main

//go:generate go run ../../cmd/vigen gen -methods delta -o hierlogreg hierlogreg.vi
