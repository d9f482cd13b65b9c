// Command broken is a conformance module with deliberate bugs, written on
// the raw ABI (no SDK), for the kit's test that the kit fails it: its
// Sequence numbers every command 1, so its second activation's command
// has a seq the host has used already; its Race, once the activity wins,
// cancels the timer by a seq that names no operation (9 where the timer
// is 2); its Status answers as the kit expects live, but words its first
// custom status otherwise when it replays, or when the host has asked it
// for more buffers than it had activations (as a guest that decides by its
// heap would). It registers every name the kit asks for; every other
// orchestration fails at once.
package main

import (
	"encoding/json"
	"time"
	"unsafe"

	"github.com/durabox/durabox/abi"
)

var (
	// in is the buffer the host writes the next request into; out holds
	// the last answer until the next call.
	in, out []byte
	// name and todo are the orchestration this instance runs and, for
	// Sequence, the inputs it has still to echo.
	name string
	todo []string
	// allocs and activations count the calls of durabox_alloc and
	// durabox_activate.
	allocs, activations int
)

//go:wasmexport durabox_abi_version
func version() int32 { return abi.Version }

//go:wasmexport durabox_alloc
func alloc(size int32) int32 {
	allocs++
	in = make([]byte, size)
	if size == 0 {
		return 0
	}
	return int32(uintptr(unsafe.Pointer(&in[0])))
}

// answer keeps b and returns its region.
func answer(b []byte) int64 {
	out = b
	if len(b) == 0 {
		return 0
	}
	return int64(abi.PackRegion(uint32(uintptr(unsafe.Pointer(&out[0]))), uint32(len(out))))
}

//go:wasmexport durabox_describe
func describe() int64 {
	return answer(abi.EncodeManifest(&abi.Manifest{
		SDK:            "broken (deliberately)",
		Orchestrations: []string{"Sequence", "FanOut", "Fails", "Timer", "Race", "Events", "Waiter", "Cancellable", "Parent", "Countdown", "Status", "Raiser"},
		Activities:     []string{"Echo", "Boom"},
	}))
}

//go:wasmexport durabox_activity
func activity(addr, n int32) int64 {
	req, _ := abi.DecodeActivityRequest(in[:n])
	res := &abi.ActivityResult{Output: req.Input}
	if req.Name == "Boom" {
		var s string
		json.Unmarshal(req.Input, &s)
		res = &abi.ActivityResult{Failure: &abi.Failure{Message: "boom: " + s}}
	}
	return answer(abi.EncodeActivityResult(res))
}

//go:wasmexport durabox_activate
func activate(addr, n int32) int64 {
	activations++
	a, err := abi.DecodeActivation(in[:n])
	if err != nil {
		panic(err)
	}
	var cmds []abi.Command
	for _, j := range a.Jobs {
		if j.Kind == abi.JobStart {
			name = j.Name
			json.Unmarshal(j.Input, &todo)
			cmds = start(a.Replaying)
			continue
		}
		cmds = next()
	}
	return answer(abi.EncodeActivationResult(&abi.ActivationResult{Commands: cmds}))
}

// start answers the Start job.
func start(replaying bool) []abi.Command {
	switch name {
	case "Status":
		status := "working"
		switch {
		case replaying:
			status = "working (replaying)" // the bug
		case allocs > activations:
			status = "working (the heap grew)" // the bug
		}
		return []abi.Command{
			{Kind: abi.CommandSetCustomStatus, Seq: 1, Name: status},
			{Kind: abi.CommandPatch, Seq: 2, Name: "kit-change"},
			{Kind: abi.CommandScheduleActivity, Seq: 3, Name: "Echo", Input: []byte(`"patched"`)},
		}
	case "Sequence":
		return next()
	case "Race":
		return []abi.Command{
			{Kind: abi.CommandScheduleActivity, Seq: 1, Name: "Echo", Input: []byte(`"fast"`)},
			{Kind: abi.CommandStartTimer, Seq: 2, Delay: int64(time.Hour)},
		}
	}
	return []abi.Command{{Kind: abi.CommandFail, Seq: 1, Failure: &abi.Failure{Message: "the broken module does not implement " + name}}}
}

// next answers the job that resolves the orchestration's operation.
func next() []abi.Command {
	switch name {
	case "Status":
		return []abi.Command{{Kind: abi.CommandSetCustomStatus, Seq: 4, Name: "done"}, {Kind: abi.CommandComplete, Seq: 5, Output: []byte(`"patched"`)}}
	case "Race":
		// The bug: the timer is 2.
		return []abi.Command{{Kind: abi.CommandCancelTimer, Seq: 3, Target: 9}, {Kind: abi.CommandComplete, Seq: 4, Output: []byte(`"fast"`)}}
	}
	// The bug: every command is numbered 1.
	if len(todo) == 0 {
		return []abi.Command{{Kind: abi.CommandComplete, Seq: 1, Output: []byte(`[]`)}}
	}
	s, _ := json.Marshal(todo[0])
	todo = todo[1:]
	return []abi.Command{{Kind: abi.CommandScheduleActivity, Seq: 1, Name: "Echo", Input: s}}
}

func main() {}
