// Package client talks to a Durabox host over its HTTP API, the API the
// durabox command line uses. It depends on neither wazero nor SQLite.
//
//	c := client.New("https://durabox.example.com:7070", &client.Options{Token: token, RootCAs: roots})
//	mod, err := c.Deploy(ctx, wasm)
//	id, err := c.Start(ctx, api.StartRequest{Name: "Greeting", Input: json.RawMessage(`"world"`)})
//	inst, err := c.Wait(ctx, id)
//	// inst.Status is Completed, Failed, Canceled or Terminated;
//	// inst.Result or inst.Failure says how.
//
// A host on loopback without a token needs no Options. A host beyond
// loopback asks every request for a bearer token (Options.Token): the
// admin token, or a read-only one that may only read. Options.RootCAs
// trusts the authority of a self-signed certificate; a client given
// them refuses an http:// address (ErrPlainHTTP), where its token and data
// would travel in clear.
//
// # The HTTP API
//
// host/server/openapi.json describes it, and a host serves it at
// /v1/openapi.json. Every body is JSON except a module's bytes; the types
// of package host/api are the bodies, and every POST says its type
// (Content-Type: application/json; for a module, application/wasm or
// multipart/form-data), bodiless ones included.
//
//	POST   /v1/modules                   the .wasm bytes, or multipart (module, env…)  201 Module           admin
//	GET    /v1/modules                                                                 200 ModulesResponse  read
//	DELETE /v1/modules/{hash}            (or a unique prefix; none may run on it)      200 RemovedResponse  admin
//	POST   /v1/instances                 StartRequest                                  201 StartResponse    admin
//	                                     (with "raise": 200 when the instance existed)
//	GET    /v1/instances                 ?status&name&module&idPrefix&parent&          200 InstancesResponse read
//	                                     createdAfter&createdBefore&finishedBefore&
//	                                     limit&cursor
//	DELETE /v1/instances                 the same filters, &dryRun                     200 PurgedResponse   admin
//	GET    /v1/instances/{id}            ?wait=DURATION (at most 60s)                  200 InstanceDetails  read
//	                                     &brief=true (the instance alone: Wait)        200 Instance
//	DELETE /v1/instances/{id}            (purge: a finished instance only)             200 PurgeResponse    admin
//	GET    /v1/instances/{id}/history    ?execution=N (default the current one)        200 HistoryResponse  read
//	POST   /v1/instances/{id}/events     RaiseRequest                                  202 RaiseRequest     admin
//	GET    /v1/instances/{id}/queries/{name} ?data=JSON (optional)                     200 QueryResponse    read
//	POST   /v1/instances/{id}/queries/{name} QueryRequest (optional)                   200 QueryResponse    admin
//	POST   /v1/instances/{id}/cancel     CancelRequest (optional)                      202 CancelRequest    admin
//	POST   /v1/instances/{id}/terminate  CancelRequest (optional)                      202 CancelRequest    admin
//	GET    /v1/queue                                                                   200 QueueResponse    read
//	GET    /v1/access                    (what the token may do)                       200 AccessResponse   read
//	GET    /v1/version                   (what the host was built from)                200 Version          read
//	GET    /v1/openapi.json                                                            200 the document     none
//	GET    /v1/instances/{id}/replay     ?module=HASH&execution=N (both optional)       200 ReplayReport     read
//	GET    /v1/instances/{id}/bundle     (a repro bundle, application/zip)             200 the .dbx bytes   read
//	POST   /v1/instances/{id}/reset      ResetRequest                                  200 ResetPlan        admin
//	POST   /v1/upgrades                  UpgradeRequest                                200 UpgradeLine      admin
//	                                     (application/x-ndjson: a line each, as it goes)
//	GET    /healthz                      (the process answers)                         200 HealthResponse   none
//	GET    /readyz                       (the host serves its work; else 503)          200 HealthResponse   none
//	GET    /metrics                      (Prometheus's text format)                    200 text             read
//	GET    /, /ui/{file}                 (the web dashboard)                           200 HTML, JS, CSS    none
//
// With ?wait, the host answers when the instance reaches a terminal status
// or the duration has passed, whichever is first; either way with 200 and
// the instance as it then stands. Wait long-polls this way until the
// instance is done, and asks again while the host is away (a restart).
//
// POST /v1/upgrades refuses a bad request as any route does; once it has
// accepted one it answers 200 at once and sends a line for the plan, one
// per instance as it is decided, and one with the summary (or one with an
// error, if the upgrade stopped). Client.Upgrade reads them as they come.
//
// A refusal has an ErrorResponse body and one of these statuses:
//
//	400 Bad Request               a malformed body, parameter or id; JSON that is not UTF-8; a body that ended early or stalled;
//	                              a module of other orchestrations than the instances'; an event that is no reset point;
//	                              a cursor the host did not give; a module hash prefix that several modules' hashes have
//	401 Unauthorized              no token, or one the host does not accept
//	403 Forbidden                 the read-only token, on an operation that changes something; a request that changes
//	                              something from a web page of another origin (its Origin or Sec-Fetch-Site header)
//	404 Not Found                 no such instance, execution, module (hash or unique prefix), path, or query of
//	                              the instance (the message lists those it handles)
//	405 Method Not Allowed        a method the path does not serve
//	409 Conflict                  an id taken; a purge of an instance that has not finished; a raise, cancel or
//	                              terminate of one that has (the message says its status); a persistent event past
//	                              the 20 an execution takes; a module instances run on; a reset of an instance
//	                              in a turn, or changed since the reset was planned; a query of an instance whose
//	                              module was built before queries existed, or that has not begun
//	413 Request Entity Too Large  a module over 64 MiB; an input or an event's data over the host's payload limit
//	                              (serve --max-payload-mib, 16 MiB unless set)
//	415 Unsupported Media Type    a POST without the Content-Type its operation takes
//	421 Misdirected Request       a Host header that is not a name the host answers to (serve --allowed-hosts)
//	422 Unprocessable Entity      bytes that are not a Durabox module; an orchestration no deployed module registers;
//	                              a reset onto a module that does not replay the events it keeps; a query whose
//	                              handler failed, tried to change the instance or crashed its guest
//	500 Internal Server Error     anything else; the host logs it
//	503 Service Unavailable       the host is stopping: ask again; GET /readyz: the host is not ready
//
// An unknown orchestration is a 422, not a 404: the path exists; it is the
// name in the body that does not. The client returns a refusal as an *Error
// carrying the status and the host's message.
package client
