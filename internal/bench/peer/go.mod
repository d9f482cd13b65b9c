module dbxbench

go 1.25.0

require (
	github.com/durabox/durabox v0.0.0-00010101000000-000000000000
	github.com/durabox/durabox/engine v0.0.0-00010101000000-000000000000
	github.com/jackc/pgx/v5 v5.11.0
	github.com/mattn/go-sqlite3 v1.14.53
)

require (
	github.com/durabox/durabox/abi v0.0.0-00010101000000-000000000000 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	golang.org/x/text v0.41.0 // indirect
)

// The harness builds against the checkout it lives in: each of its
// modules (a replace counts only in the main module).
replace (
	github.com/durabox/durabox => ../../..
	github.com/durabox/durabox/abi => ../../../abi
	github.com/durabox/durabox/engine => ../../../engine
	github.com/durabox/durabox/guest-sdk => ../../../guest-sdk
)
