package main

//go:generate go run ../../cmd/vigen gen -methods delta -o hlm hlm.vi
