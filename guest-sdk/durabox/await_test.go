package durabox

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

func init() {
	// Scopes cancels a scope with a scope within it, leaving a timer of
	// the instance's own Context alone, then tries to start a detached
	// child in the inner scope and cancels that too.
	RegisterOrchestration("Scopes", func(ctx *Context, _ any) (string, error) {
		outer, cancelOuter := ctx.WithCancel()
		inner, cancelInner := outer.WithCancel()
		inner.NewTimer(time.Hour)
		outer.NewTimer(time.Hour)
		ctx.NewTimer(time.Hour)
		cancelOuter()
		err := inner.StartDetached("Greet", "late")
		cancelInner()
		return fmt.Sprint(err), nil
	})
	// LockCancelled holds a Mutex while a branch waits for it in a scope
	// that is then cancelled, and takes it again once it is free.
	RegisterOrchestration("LockCancelled", func(ctx *Context, _ any) (string, error) {
		var m Mutex
		var out []string
		if err := m.Lock(ctx); err != nil {
			return "", err
		}
		scope, cancel := ctx.WithCancel()
		b := ctx.Go(func(*Context) { out = append(out, fmt.Sprint(m.Lock(scope))) })
		if err := ctx.Sleep(time.Minute); err != nil {
			return "", err
		}
		cancel()
		if err := b.Get(nil); err != nil {
			return "", err
		}
		m.Unlock()
		out = append(out, fmt.Sprint(m.Lock(ctx) == nil, len(m.queue)))
		m.Unlock()
		return strings.Join(out, "; "), nil
	})
}

// TestScopeCancelsWhatIsWithinIt: cancelling a scope cancels the
// operations of the scopes within it too, in the order they started, and
// nothing of the instance's own; through a cancelled scope nothing starts,
// and a second cancel emits nothing.
func TestScopeCancelsWhatIsWithinIt(t *testing.T) {
	t.Parallel()
	rt := newRuntime()
	got := rt.activate(activation(0, start("Scopes", `null`)))
	timer := abi.Command{Kind: abi.CommandStartTimer, Delay: int64(time.Hour)}
	want := []abi.Command{timer, timer, timer,
		{Kind: abi.CommandCancelTimer, Target: 1}, {Kind: abi.CommandCancelTimer, Target: 2},
		{Kind: abi.CommandComplete, Output: []byte(`"durabox: the operation was cancelled"`)}}
	for i := range want {
		want[i].Seq = uint64(i + 1)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("commands:\n%+v\nwant:\n%+v", got, want)
	}
}

// TestMutexLockCancelledLeavesTheQueue: a Lock whose wait is cancelled
// returns the error and leaves the queue, so that the lock is free once
// its holder unlocks it.
func TestMutexLockCancelledLeavesTheQueue(t *testing.T) {
	t.Parallel()
	rt := newRuntime()
	rt.activate(activation(0, start("LockCancelled", `null`)))
	got := rt.activate(activation(60, abi.Job{Kind: abi.JobFireTimer, Seq: 1}))
	want := []abi.Command{{Kind: abi.CommandComplete, Seq: 2, Output: []byte(`"durabox: the operation was cancelled; true 0"`)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("commands:\n%+v\nwant:\n%+v", got, want)
	}
}
