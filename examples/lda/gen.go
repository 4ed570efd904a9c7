package main

//go:generate go run ../../cmd/vigen gen -o lda lda.vi
