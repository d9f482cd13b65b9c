package durabox

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

func init() {
	RegisterOrchestration("Retrying", func(ctx *Context, _ any) (string, error) {
		return CallWithRetry[string](ctx, RetryPolicy{MaxAttempts: 3, InitialInterval: time.Second}, "Flaky", nil)
	})
	RegisterOrchestration("Cancellable", func(ctx *Context, _ any) (string, error) {
		work := ctx.CallActivity("Work", nil)
		timer := ctx.NewTimer(time.Hour)
		err := work.Get(nil)
		if !errors.Is(err, ErrCanceled) || !errors.Is(timer.Get(nil), ErrCanceled) || ctx.Err() == nil {
			return "", fmt.Errorf("not cancelled: %v", err)
		}
		// Clean up, then report the cancellation.
		if _, err := Call[string](ctx, "Cleanup", nil); err != nil {
			return "", err
		}
		return "", err
	})
	RegisterOrchestration("Guids", func(ctx *Context, _ any) ([]string, error) {
		return []string{ctx.NewGUID(), ctx.NewGUID()}, nil
	})
}

func TestCallWithRetry(t *testing.T) {
	t.Parallel()
	rt := newRuntime()
	failure := func(seq uint64) abi.Job {
		return abi.Job{Kind: abi.JobResolveActivity, Seq: seq, Failure: &abi.Failure{Message: "no"}}
	}
	expect(t, "start", rt.activate(activation(0, start("Retrying", `null`))), "Flaky")
	got := rt.activate(activation(1, failure(1)))
	expect(t, "attempt 1 fails", got, "timer")
	if got[0].Delay != int64(time.Second) {
		t.Fatalf("first wait %s, want 1s", time.Duration(got[0].Delay))
	}
	expect(t, "the wait ends", rt.activate(activation(2, abi.Job{Kind: abi.JobFireTimer, Seq: 2})), "Flaky")
	got = rt.activate(activation(3, failure(3)))
	if len(got) != 1 || got[0].Delay != int64(2*time.Second) {
		t.Fatalf("second wait %+v, want 2s", got)
	}
	expect(t, "the wait ends", rt.activate(activation(5, abi.Job{Kind: abi.JobFireTimer, Seq: 4})), "Flaky")
	expect(t, "attempt 3 fails", rt.activate(activation(6, failure(5))), `fail activity "Flaky" failed: no (after 3 attempts)`)
}

var uuid = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewGUIDIsStableAcrossReplays(t *testing.T) {
	t.Parallel()
	first := newRuntime().activate(activation(0, start("Guids", `null`)))
	again := newRuntime().activate(activation(0, start("Guids", `null`)))
	if string(first[0].Output) != string(again[0].Output) {
		t.Fatalf("replay gave other GUIDs: %s and %s", first[0].Output, again[0].Output)
	}
	var ids []string
	if err := json.Unmarshal(first[0].Output, &ids); err != nil || ids[0] == ids[1] || !uuid.MatchString(ids[0]) || !uuid.MatchString(ids[1]) {
		t.Fatalf("GUIDs %v (%v)", ids, err)
	}
}

func TestCancellation(t *testing.T) {
	t.Parallel()
	rt := newRuntime()
	expect(t, "start", rt.activate(activation(0, start("Cancellable", `null`))), "Work", "timer")
	expect(t, "cancel", rt.activate(activation(1, abi.Job{Kind: abi.JobCancel, Name: "no longer needed"})), "cancel activity 1", "cancel timer 2", "Cleanup")
	expect(t, "cleaned up", rt.activate(activation(2, resolve(5, `"clean"`))), "fail durabox: the instance was cancelled: no longer needed")
}
