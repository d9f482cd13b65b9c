// Package api holds the wire types of a Durabox host's HTTP API: the JSON
// bodies of its requests and answers, which the host's Go API speaks too,
// and which its HTTP server (host/server) and its client
// (host/client) share; and the sentinel errors a host returns, which the
// server maps to HTTP statuses. host/server/openapi.json describes the bodies
// and the routes (docs/api.md lists them).
//
// It imports the engine, for the events and statuses the bodies carry,
// and nothing of the host: a client, or a fake host in a test, links no
// wasm runtime.
package api
