// The replay engine: the ABI and the standard library only. A module of its
// own because the SDK's test kit (durtest) runs it (RATIONALE.md).
module github.com/durabox/durabox/engine

go 1.25.0

require github.com/durabox/durabox/abi v0.0.0-00010101000000-000000000000

// Durabox is not published: the modules it depends on are its neighbours.
replace github.com/durabox/durabox/abi => ../abi
