package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The workload: instances of the example orchestrations, each with what it
// must end with and how many of each step its history must hold, so that a
// lost or doubled step shows.

// modules are the example modules the workload deploys.
var modules = []string{"hello", "fanout", "approval", "parentchild", "eternal", "retry"}

// expect is what one instance must end with.
type expect struct {
	name  string
	input any
	// result is the JSON the instance must complete with.
	result any
	// executions is the number of executions (continue-as-new makes more).
	executions int64
	// activities, timers, children and events count the ActivityScheduled,
	// TimerCreated, SubOrchestrationScheduled and ExternalEvent events over
	// all executions.
	activities, timers, children, events int
	// approve marks an Approval instance, which the driver approves once it
	// waits for the decision.
	approve bool
}

// plan returns the instances to start, by id: scale of each kind.
func plan(scale int) map[string]*expect {
	out := map[string]*expect{}
	for i := range scale {
		out[fmt.Sprint("hello-", i)] = &expect{name: "Greeting", input: fmt.Sprint("world ", i), result: fmt.Sprintf("Hello, world %d!", i), executions: 1, activities: 1}
		// Count takes a millisecond a word: long enough for kills to land
		// while it runs, short enough to finish between most of them. (An
		// activity killed 8 times in a row is poison by the host's rules,
		// and fails: with 500-word documents, this test saw that happen.)
		docs := []string{"one two three", strings.Repeat("word ", 10*(i+1)), "last"}
		out[fmt.Sprint("fanout-", i)] = &expect{name: "WordCount", input: docs, result: 3 + 10*(i+1) + 1, executions: 1, activities: len(docs)}
		item := fmt.Sprint("order ", i)
		out[fmt.Sprint("approval-", i)] = &expect{name: "Approval", input: map[string]string{"item": item, "timeout": "1h"},
			result: item + " approved by crashtest", executions: 1, activities: 2, timers: 1, events: 1, approve: true}
		parcels := []string{fmt.Sprint("box ", i), fmt.Sprint("crate ", i)}
		out[fmt.Sprint("parent-", i)] = &expect{name: "Parent", input: parcels,
			result: fmt.Sprintf("box %d shipped; crate %d shipped", i, i), executions: 1, children: 2}
		out[fmt.Sprint("heartbeat-", i)] = &expect{name: "Heartbeat", input: map[string]any{"round": 0, "rounds": 5, "every": "400ms"},
			result: "stopped after 5 rounds", executions: 5, activities: 5, timers: 4}
		out[fmt.Sprint("retry-", i)] = &expect{name: "Retry", input: map[string]any{"attempts": 3, "failures": 1, "delay": "200ms", "workMillis": 60},
			result: "succeeded on attempt 2", executions: 1, activities: 2, timers: 1}
	}
	return out
}

// child returns what a child instance started by a Parent must end with,
// from its name and input.
func child(name string, input json.RawMessage) (*expect, error) {
	switch name {
	case "Ship":
		var parcel string
		if err := json.Unmarshal(input, &parcel); err != nil {
			return nil, err
		}
		return &expect{name: name, input: parcel, result: parcel + " shipped", executions: 1, activities: 1}, nil
	case "Audit":
		var n int
		if err := json.Unmarshal(input, &n); err != nil {
			return nil, err
		}
		return &expect{name: name, input: n, result: fmt.Sprintf("audited an order of %d parcels", n), executions: 1}, nil
	}
	return nil, fmt.Errorf("no instance of %s was expected", name)
}
