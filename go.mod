module github.com/structtensor/structtensor-go

go 1.26
