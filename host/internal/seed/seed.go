// Package seed derives the random seed of an execution of an
// orchestration instance from its identity, so that what it draws is the
// same on every replay (host.Seed).
package seed

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

// Of returns the random seed of an execution of an instance whose
// history, and first messages if its first turn has not committed, are
// events: the seed of its own number, or, for a reset execution, of the
// execution its ExecutionReset marker names, which recorded the kept
// events. A host gives each execution's orchestration this seed.
func Of(instanceID string, execution int64, events ...[]engine.Event) [32]byte {
	return seed(instanceID, Execution(execution, events...))
}

// Execution returns the number of the execution whose seed an execution
// draws from, as Of says: its own, or the one a reset marker names.
func Execution(execution int64, events ...[]engine.Event) int64 {
	for _, evs := range events {
		for _, ev := range evs {
			if ev.Kind == engine.ExecutionReset {
				return ev.SeedExecution
			}
		}
	}
	return execution
}
