package main

//go:generate go run ../../cmd/vigen gen -o eightschools eightschools.vi
//go:generate go run ../../cmd/vigen gen -o centred centred.vi
