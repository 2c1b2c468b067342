module github.com/structtensor/structtensor-go

go 1.26

require (
	github.com/bufbuild/protocompile v0.14.1 // indirect
	golang.org/x/sync v0.8.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
