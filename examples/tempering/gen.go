package main

//go:generate go run ../../cmd/vigen gen -o gmm gmm.vi
//go:generate go run ../../cmd/vigen gen -o gmmsigma gmmsigma.vi
