package host

import (
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/internal/seed"
)

// Seed returns the random seed of an execution of an instance whose
// history, and first messages if its first turn has not committed, are
// events: the seed of its own number, or, for a reset execution, of the
// execution its ExecutionReset marker names, which recorded the kept
// events. A host gives each execution's orchestration this seed.
func Seed(instanceID string, execution int64, events ...[]engine.Event) [32]byte {
	return seed.Of(instanceID, execution, events...)
}
