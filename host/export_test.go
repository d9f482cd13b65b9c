package host

import (
	"sync"
	"testing"

	"github.com/durabox/durabox/host/internal/guard"
)

// TestCacheDir is where every host a test starts keeps its compiled
// modules, so that each module is compiled once per test run, as a
// restarted host does with its cache. TestMain sets it.
var TestCacheDir string

// InjectPanic makes the host panic once at point (see panics.go) when it
// serves key there, until t ends.
func InjectPanic(t testing.TB, point, key string) {
	var once sync.Once
	f := func(p, k string) {
		if p == point && k == key {
			once.Do(func() { panic("injected at " + point + " for " + key) })
		}
	}
	guard.Inject.Store(&f)
	t.Cleanup(func() { guard.Inject.Store(nil) })
}
