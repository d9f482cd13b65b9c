// Command boundary is a guest that speaks the ABI by hand, without the
// SDK, so that it can hand the host the names, texts and JSON the SDK never
// would: a name that is not UTF-8, a custom status with a NUL, a result
// that is not JSON. The host must refuse each where it enters.
//
// Its manifest registers the orchestrations Emit and Call and the
// activities Output and Failure, and beside them the names the link-time
// variables orchestration and activity hold, if set: "x" followed by the
// name in hex, so that a name may hold any byte, or none.
//
// Emit takes {"kind": K, "hex": H} and emits, in its first step, one
// command carrying the bytes H as K says (activity, event, persistent,
// patch, status, child, childid, input, result, failure, details, none),
// then a timer; when the timer fires it completes with "done". So a
// command refused live is refused again in a replay, and a command
// recorded wrongly diverges when the first step replays cold. With kind
// wait, it waits for the event H instead (its custom status says
// "waiting"), and completes with the event's data.
//
// Call takes {"activity": A, "hex": H} and calls A with H: Output returns
// the bytes H as its output, Failure fails with them as its message. Call
// completes with the activity's output, or fails with its failure.
package main

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"unsafe"

	"github.com/durabox/durabox/abi"
)

// orchestration and activity, when set at link time (-X), are "x" and a
// name in hex, which the manifest registers beside the others.
var orchestration, activity string

var (
	in, out []byte
	// seq is the number of the next command of the execution: a wasm
	// instance runs one execution.
	seq uint64 = 1
)

func unhex(s string) string {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic("boundary: not hex: " + s)
	}
	return string(b)
}

//go:wasmexport durabox_abi_version
func version() int32 { return abi.Version }

//go:wasmexport durabox_alloc
func alloc(size int32) int32 {
	in = make([]byte, max(size, 1))
	return int32(uintptr(unsafe.Pointer(unsafe.SliceData(in))))
}

func respond(b []byte) int64 {
	out = b
	if len(b) == 0 {
		return 0
	}
	return int64(abi.PackRegion(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint32(len(b))))
}

// request returns the region the host wrote into in.
func request(addr, length int32) []byte {
	if length < 0 || int(length) > len(in) || addr != int32(uintptr(unsafe.Pointer(unsafe.SliceData(in)))) {
		panic("boundary: the host passed a region it did not allocate")
	}
	return in[:length]
}

//go:wasmexport durabox_describe
func describe() int64 {
	b := abi.EncodeManifest(&abi.Manifest{SDK: "boundary", Orchestrations: []string{"Emit", "Call"}, Activities: []string{"Output", "Failure"}})
	if orchestration != "" {
		b = appendString(b, 2, unhex(orchestration[1:]))
	}
	if activity != "" {
		b = appendString(b, 3, unhex(activity[1:]))
	}
	return respond(b)
}

// appendString appends a string field to an encoded message, by hand, so
// that it is there even when empty (abi's encoder leaves empty strings
// out).
func appendString(b []byte, field uint64, s string) []byte {
	b = binary.AppendUvarint(b, field<<1|1)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// command numbers c and returns it.
func command(c abi.Command) abi.Command {
	c.Seq = seq
	seq++
	return c
}

// emitInput is Emit's input; callInput is Call's.
type (
	emitInput struct {
		Kind string `json:"kind"`
		Hex  string `json:"hex"`
	}
	callInput struct {
		Activity string `json:"activity"`
		Hex      string `json:"hex"`
	}
)

//go:wasmexport durabox_activate
func activate(addr, length int32) int64 {
	a, err := abi.DecodeActivation(request(addr, length))
	if err != nil {
		panic(err)
	}
	var cmds []abi.Command
	for _, job := range a.Jobs {
		cmds = append(cmds, apply(job)...)
	}
	return respond(abi.EncodeActivationResult(&abi.ActivationResult{Commands: cmds}))
}

func apply(job abi.Job) []abi.Command {
	switch {
	case job.Kind == abi.JobStart && job.Name == "Call":
		var in callInput
		if err := json.Unmarshal(job.Input, &in); err != nil {
			panic(err)
		}
		data, _ := json.Marshal(in.Hex)
		return []abi.Command{command(abi.Command{Kind: abi.CommandScheduleActivity, Name: in.Activity, Input: data})}
	case job.Kind == abi.JobStart:
		var in emitInput
		if err := json.Unmarshal(job.Input, &in); err != nil {
			panic(err)
		}
		if in.Kind == "wait" {
			return []abi.Command{
				command(abi.Command{Kind: abi.CommandWaitEvent, Name: unhex(in.Hex)}),
				command(abi.Command{Kind: abi.CommandSetCustomStatus, Name: "waiting"}),
			}
		}
		return []abi.Command{emit(in.Kind, unhex(in.Hex)), command(abi.Command{Kind: abi.CommandStartTimer})}
	case job.Failure != nil:
		return []abi.Command{command(abi.Command{Kind: abi.CommandFail, Failure: job.Failure})}
	case job.Kind == abi.JobResolveActivity || job.Kind == abi.JobResolveEvent:
		return []abi.Command{command(abi.Command{Kind: abi.CommandComplete, Output: job.Result})}
	}
	return []abi.Command{command(abi.Command{Kind: abi.CommandComplete, Output: []byte(`"done"`)})}
}

// emit returns the command that carries s as kind says.
func emit(kind, s string) abi.Command {
	switch kind {
	case "activity":
		return command(abi.Command{Kind: abi.CommandScheduleActivity, Name: s, Input: []byte("null")})
	case "input":
		return command(abi.Command{Kind: abi.CommandScheduleActivity, Name: "Output", Input: []byte(s)})
	case "event":
		return command(abi.Command{Kind: abi.CommandWaitEvent, Name: s})
	case "persistent":
		return command(abi.Command{Kind: abi.CommandWaitEventPersistent, Name: s})
	case "patch":
		return command(abi.Command{Kind: abi.CommandPatch, Name: s})
	case "status":
		return command(abi.Command{Kind: abi.CommandSetCustomStatus, Name: s})
	case "child":
		return command(abi.Command{Kind: abi.CommandStartChild, Name: s, Input: []byte("null"), Detached: true})
	case "childid":
		return command(abi.Command{Kind: abi.CommandStartChild, Name: "Call", InstanceID: s, Input: []byte("null"), Detached: true})
	case "result":
		return command(abi.Command{Kind: abi.CommandComplete, Output: []byte(s)})
	case "failure":
		return command(abi.Command{Kind: abi.CommandFail, Failure: &abi.Failure{Message: s}})
	case "details":
		return command(abi.Command{Kind: abi.CommandFail, Failure: &abi.Failure{Message: "failed", Details: s}})
	}
	return command(abi.Command{Kind: abi.CommandSetCustomStatus, Name: "fine"})
}

//go:wasmexport durabox_activity
func runActivity(addr, length int32) int64 {
	req, err := abi.DecodeActivityRequest(request(addr, length))
	if err != nil {
		panic(err)
	}
	var h string
	if err := json.Unmarshal(req.Input, &h); err != nil {
		panic(err)
	}
	res := &abi.ActivityResult{Output: []byte(unhex(h))}
	if req.Name == "Failure" {
		res = &abi.ActivityResult{Failure: &abi.Failure{Message: unhex(h)}}
	}
	return respond(abi.EncodeActivityResult(res))
}

func main() {}
