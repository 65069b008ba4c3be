module rocks-ribbon/go

go 1.19
