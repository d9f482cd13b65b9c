// Package oddstore checks that a host starts and serves on a database that
// holds every kind of odd data: what a careless or hostile guest or client
// could have put there, and what a damaged or hand-edited database holds.
// Each store's tests run it on that store:
//
//	func TestOddDatabase(t *testing.T) {
//		oddstore.Run(t, oddstore.Backend{Open: open, Raw: raw, Check: check})
//	}
//
// Run builds the database with a host on the store's API (deploys, runs
// instances until they wait, starts others), then, with the store closed,
// edits it with SQL (Raw) as the API would never let it be: text that is
// not UTF-8 or holds NUL, huge texts and payloads, an instance whose module
// row is missing, a module whose wasm is garbage, history rows that do not
// decode, of an unknown kind, with a negative or huge id or a gap, timers
// due in 1970 and in the year 9999, messages for instances that do not
// exist or that do not decode, activity tasks no instance waits for.
// What the database refuses to hold (PostgreSQL's text holds neither NUL
// nor bytes that are not UTF-8) is logged and left out.
//
// Then it opens the store again, starts a host on it with its HTTP
// handler, and checks that the host becomes ready; that it fails each
// broken instance with a reason that says what is wrong, and leaves the
// others as they were; that it lists every instance, and serves the status
// and the history of each, as JSON; that it runs a new instance to
// completion; that it settles (its fetchers do not spin on what they
// cannot take); and that it stops when told to. Last, it checks the
// database as durabox check-db does (Check), which must name every
// instance whose rows the edits left breaking the store's invariants.
package oddstore
