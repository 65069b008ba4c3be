module rocks-ribbon/examples/go

go 1.19

require rocks-ribbon/go v0.0.0

replace rocks-ribbon/go => ../../go
