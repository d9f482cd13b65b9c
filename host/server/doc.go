// Package server serves a Durabox host's operations over HTTP, as
// openapi.json (served at /v1/openapi.json) describes, for the durabox
// command line and package host/client: New serves any API, a host.Host
// or, in tests, host/client/fakehost. With tokens (Options.Tokens, each
// named, with a role; Options.Token, ReadToken and WorkerToken; the
// handler's SetTokens replaces them, as serve does on SIGHUP) it asks
// every request for a bearer token, and carries the token's name into the
// host (package host/internal/identity), whose histories record it. Each
// request that changes something is recorded, with the token's name and
// its outcome, in the audit log of an API that keeps one (Auditor; a
// Host does), refused ones too (audit.go): a start that creates its
// instance, a raise, a cancel and a terminate in the change's own
// transaction (the server hands the host the record in the request's
// context, identity.Record), any other request once answered. It
// also serves the metrics (/metrics, Options.Metrics), the health checks
// (/healthz, /readyz) and the web dashboard (/, files under /ui/, from the
// directory dashboard), which reads the same API. Whatever the token, it
// refuses what a web page of another origin could make a browser send
// (origin.go): a Host it does not answer to (Options.Hosts), a change from
// a page of another origin, a POST body of another type than its route's.
// A panic serving a request is answered with 500 and counted; the server
// goes on.
//
// The bodies are package host/api's types. The server links no wasm
// runtime: it knows a host only through API.
package server
