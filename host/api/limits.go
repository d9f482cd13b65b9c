package api

import "github.com/durabox/durabox/engine"

// MaxPage is the most instances one page of a listing holds (GET
// /v1/instances?limit).
const MaxPage = 1000

// DefaultMaxPayload is the largest payload a host takes unless it is told
// otherwise (host.Options.MaxPayload, the server's Options.MaxPayload,
// durabox serve --max-payload-mib): 16 MiB.
const DefaultMaxPayload = 16 << 20

// DefaultHistoryWarning is the length of an execution's history, in
// events, past which a host warns unless it is told otherwise
// (host.Options.HistoryWarning, durabox serve --history-warning).
const DefaultHistoryWarning = engine.DefaultHistoryWarning
