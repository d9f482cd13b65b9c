// The guest SDK, what an orchestration author requires: the ABI, and the
// engine for the test kit. It must never require the host's module
// (RATIONALE.md).
module github.com/durabox/durabox/guest-sdk

go 1.25.0

require (
	github.com/durabox/durabox/abi v0.0.0-00010101000000-000000000000
	github.com/durabox/durabox/engine v0.0.0-00010101000000-000000000000
)

// Durabox is not published: the modules it depends on are its neighbours.
// An author's go.mod repeats these (durabox new writes them), since Go
// reads replace directives only in the main module.
replace (
	github.com/durabox/durabox/abi => ../abi
	github.com/durabox/durabox/engine => ../engine
)
