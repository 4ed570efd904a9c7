module github.com/vigen-go/vigen

go 1.26.8

require (
	github.com/alecthomas/participle/v2 v2.1.4 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)
