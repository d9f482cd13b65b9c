// Package identity carries who asked for a change, from the API's server,
// which authenticated the request's token, into the host, which records
// the token's name in the history of the instance changed (engine.Event's
// By). It is never read from a request's body: only the server sets it.
// With a change the host commits in one transaction (a start, a raise, a
// cancel, a terminate), it also carries the request's audit record
// (Record), which the host commits with the change, so that no change is
// answered whose record may yet be lost.
package identity

import "context"

// Caller is who made a request: the name of its token and the role that
// token has (admin, read, worker).
type Caller struct {
	Name, Role string
}

type key struct{}

// With returns ctx carrying c.
func With(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, key{}, c)
}

// From returns the caller ctx carries; the zero Caller when none (a call
// from Go, not through the API).
func From(ctx context.Context) Caller {
	c, _ := ctx.Value(key{}).(Caller)
	return c
}
