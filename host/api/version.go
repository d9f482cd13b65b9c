package api

// Version is the answer to GET /v1/version, and what durabox version
// prints: what the host was built from.
type Version struct {
	// Durabox is the version of the module github.com/durabox/durabox the
	// binary was built from: a tag such as v1.2.0, or "(devel)" for a
	// build from a checkout.
	Durabox string `json:"durabox"`
	// Revision is the commit of the checkout, and Modified whether it had
	// changes, when go build recorded them (a build from a git checkout);
	// empty otherwise.
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// Go is the version of Go the binary was built with.
	Go string `json:"go"`
	// ABI is the version of the ABI between host and guest (abi.Version)
	// that a module must export.
	ABI int `json:"abi"`
	// Runtimes are the versions of the WebAssembly runtimes linked in, by
	// name (wazero, wasmtime): their Go modules' versions.
	Runtimes map[string]string `json:"runtimes"`
	// Schemas are the store schema versions this durabox writes, by store
	// (sqlite, postgres): a database of a newer one is refused, an older
	// one migrated when a host opens it.
	Schemas map[string]int `json:"schemas"`
}
