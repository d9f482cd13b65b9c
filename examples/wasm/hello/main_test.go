package main

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

func TestGreeting(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	inst := env.Start("Greeting", "world")
	var got string
	if err := inst.Result(&got); err != nil {
		t.Fatal(err)
	}
	if got != "Hello, world!" {
		t.Fatalf("result %q", got)
	}
	var kinds []engine.EventKind
	for _, e := range inst.History() {
		kinds = append(kinds, e.Kind)
	}
	want := []engine.EventKind{engine.OrchestrationStarted, engine.ActivityScheduled, engine.ActivityCompleted, engine.OrchestrationCompleted}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("history %v, want %v", kinds, want)
	}
}

func TestGreetingFailsWithSayHello(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	durtest.MockActivity(env, "SayHello", func(context.Context, string) (string, error) { return "", errors.New("no voice") })
	inst := env.Start("Greeting", "world")
	if f := inst.Failure(); inst.Status() != engine.StatusFailed || f == nil || f.Message != `activity "SayHello" failed: no voice` {
		t.Fatalf("status %s, failure %+v", inst.Status(), f)
	}
}
