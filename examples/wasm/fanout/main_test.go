package main

import (
	"context"
	"errors"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

func TestWordCount(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	inst := env.Start("WordCount", []string{"one two three four five six seven eight", "nine ten", "eleven"})
	var total int
	if err := inst.Result(&total); err != nil {
		t.Fatal(err)
	}
	if total != 11 {
		t.Fatalf("total %d, want 11", total)
	}
	// Every count is called before any result is awaited.
	h := inst.History()
	for i, kind := range []engine.EventKind{engine.ActivityScheduled, engine.ActivityScheduled, engine.ActivityScheduled} {
		if h[i+1].Kind != kind {
			t.Fatalf("event %d is %s, want %s", i+2, h[i+1].Kind, kind)
		}
	}
}

func TestWordCountFailsWhenACountFails(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	durtest.MockActivity(env, "Count", func(_ context.Context, doc string) (int, error) {
		if doc == "unreadable" {
			return 0, errors.New("cannot read")
		}
		return 1, nil
	})
	inst := env.Start("WordCount", []string{"a", "unreadable", "b"})
	if f := inst.Failure(); f == nil || f.Message != `activity "Count" failed: cannot read` {
		t.Fatalf("status %s, failure %+v", inst.Status(), f)
	}
}
