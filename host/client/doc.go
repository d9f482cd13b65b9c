// Package client talks to a Durabox host over its HTTP API, the API the
// durabox command line uses. It depends on neither wazero nor SQLite.
//
//	c := client.New("http://127.0.0.1:7070", nil)
//	mod, err := c.Deploy(ctx, wasm)
//	id, err := c.Start(ctx, client.StartRequest{Name: "Greeting", Input: json.RawMessage(`"world"`)})
//	inst, err := c.Wait(ctx, id)
//	// inst.Status is Completed or Failed; inst.Result or inst.Failure says how.
//
// # The HTTP API
//
// Every body is JSON except a module's bytes. The types in this package are
// the bodies.
//
//	POST /v1/modules                 body: the .wasm bytes, at most 64 MiB   201 Module
//	                                 ?env=KEY=VALUE (repeatable)
//	GET  /v1/modules                                                         200 ModulesResponse
//	POST /v1/instances               body: StartRequest                      201 StartResponse
//	GET  /v1/instances                                                       200 InstancesResponse
//	GET  /v1/instances/{id}          ?wait=DURATION (optional, at most 60s)  200 Instance
//	GET  /v1/instances/{id}/history  ?execution=N (optional: an earlier     200 HistoryResponse
//	                                 execution; default the current one)
//	POST /v1/instances/{id}/events   body: RaiseRequest                      202 RaiseRequest
//	POST /v1/instances/{id}/cancel   body: CancelRequest (optional)          202 CancelRequest
//	DELETE /v1/instances/{id}        (purge: a finished instance only)       200 PurgeResponse
//	GET  /v1/instances/{id}/replay   ?module=HASH&execution=N (optional)     200 ReplayReport
//	GET  /v1/instances/{id}/bundle   (a repro bundle, application/zip)       200 the .dbx bytes
//	POST /v1/instances/{id}/reset    body: ResetRequest                      200 ResetPlan
//	POST /v1/upgrades                body: UpgradeRequest                    200 UpgradeLine, one per line
//	                                 (application/x-ndjson, as it goes)
//
// With ?wait, the host answers when the instance reaches a terminal status
// or the duration has passed, whichever is first; either way with 200 and
// the instance as it then stands. Wait long-polls this way until the
// instance is done.
//
// POST /v1/upgrades refuses a bad request as any route does; once it has
// accepted one it answers 200 at once and sends a line for the plan, one
// per instance as it is decided, and one with the summary (or one with an
// error, if the upgrade stopped). Client.Upgrade reads them as they come.
//
// A refusal has an ErrorResponse body and one of these statuses:
//
//	400 Bad Request               a malformed body or ?wait, an input that is not JSON, a bad instance id;
//	                              a module of other orchestrations than the instances'; not a reset point
//	404 Not Found                 no such instance; no deployed module with that hash (or prefix)
//	409 Conflict                  an instance with that id exists already; a purge of an instance that has not finished;
//	                              a reset of an instance in a turn, or changed since its plan
//	413 Request Entity Too Large  a module over 64 MiB
//	422 Unprocessable Entity      bytes that are not a Durabox module; an orchestration no deployed module registers;
//	                              a reset onto a module that does not replay the events it keeps
//	500 Internal Server Error     anything else; the host logs it
//
// An unknown orchestration is a 422, not a 404: the path exists; it is the
// name in the body that does not. The client returns a refusal as an *Error
// carrying the status and the host's message.
package client
