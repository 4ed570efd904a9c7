module github.com/vigen-go/vigen

go 1.26.8

require (
	github.com/alecthomas/participle/v2 v2.1.4
	gonum.org/v1/gonum v0.17.0
)

require golang.org/x/tools v0.30.0 // indirect
