module example.com/ribbon-go-example

go 1.19
