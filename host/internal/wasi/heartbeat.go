package wasi

import (
	"context"

	"github.com/durabox/durabox/abi"
)

// HeartbeatFunctions take an activity's heartbeats (module
// abi.ImportModule).
var HeartbeatFunctions = []Function{
	{Name: abi.ImportHeartbeat, Params: params(2), Call: heartbeat},
}

// The answers of abi.ImportHeartbeat.
const (
	HeartbeatTaken    = 0
	HeartbeatUnwanted = 1
	HeartbeatRefused  = 2
)

// SetHeartbeat gives a real environment the function that takes the
// heartbeats of the activity attempt it runs (nil: none), with their
// details (JSON, or nil); it returns one of the answers above.
func (e *Env) SetHeartbeat(f func(ctx context.Context, details []byte) uint32) { e.beat = f }

// heartbeat answers abi.ImportHeartbeat with the attempt's function: an
// orchestration, an environment without one, or details outside memory
// are refused.
func heartbeat(ctx context.Context, e *Env, m Memory, a []uint64) uint32 {
	details, ok := m.Read(uint32(a[0]), uint32(a[1]))
	if !ok || e.deterministic || e.beat == nil {
		return HeartbeatRefused
	}
	if len(details) == 0 {
		details = nil
	} else {
		details = append([]byte(nil), details...) // memory the guest reuses
	}
	return e.beat(ctx, details)
}
