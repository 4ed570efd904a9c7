package main

//go:generate go run ../../cmd/vigen gen -methods delta -o ar2 ar2.vi
