package main

//go:generate go run ../../cmd/vigen gen -methods delta -o eightschools eightschools.vi
//go:generate go run ../../cmd/vigen gen -methods delta -o centred centred.vi
