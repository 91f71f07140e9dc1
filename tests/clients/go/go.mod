module github.com/vancetope/vance/tests/clients/go

go 1.23

require (
	github.com/vancetope/vance/clients/go v0.0.0
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250218202821-56aae31c358a
	google.golang.org/grpc v1.72.1
)

require (
	golang.org/x/net v0.35.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
	golang.org/x/text v0.22.0 // indirect
	google.golang.org/protobuf v1.36.6 // indirect
)

// The generated module from this repository (`make clients`), as another team's go.mod would
// require it by path.
replace github.com/vancetope/vance/clients/go => ../../../clients/go
