module github.com/durabox/durabox

go 1.25.0

require (
	github.com/mattn/go-sqlite3 v1.14.53
	github.com/tetratelabs/wazero v1.12.0
	golang.org/x/mod v0.34.0
)

require golang.org/x/sys v0.44.0 // indirect
