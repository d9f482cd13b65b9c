package host

import (
	"crypto/sha256"
	"fmt"

	"github.com/durabox/durabox/engine"
)

// seed derives an execution's random seed from its identity, so that what
// it draws from its Env (crypto/rand) is the same on every replay. (The Go
// runtime's own randomness, such as map order and math/rand's global
// source, comes from the module's snapshot: the same in every instance.)
func seed(instanceID string, execution int64) [32]byte {
	return sha256.Sum256([]byte(fmt.Sprintf("durabox/%s/%d", instanceID, execution)))
}

// Seed returns the random seed of an execution of an instance whose
// history, and first messages if its first turn has not committed, are
// events: the seed of its own number, or, for a reset execution, of the
// execution its ExecutionReset marker names, which recorded the kept
// events. A host gives each execution's orchestration this seed.
func Seed(instanceID string, execution int64, events ...[]engine.Event) [32]byte {
	return seed(instanceID, seedExecution(execution, events...))
}

// seedExecution returns the number of the execution whose seed an
// execution draws from, as Seed says.
func seedExecution(execution int64, events ...[]engine.Event) int64 {
	for _, evs := range events {
		for _, ev := range evs {
			if ev.Kind == engine.ExecutionReset {
				return ev.SeedExecution
			}
		}
	}
	return execution
}
