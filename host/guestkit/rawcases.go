package guestkit

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/internal/ijson"
)

// A script is the activations of one orchestration instance on the raw
// ABI, each with the commands it must answer.
type script struct {
	orchestration, id, input string
	steps                    []step
}

// A step is one activation: its jobs (the first script step's is the
// Start job, which the script adds), how far after kitStart it is, and
// the commands the guest must answer.
type step struct {
	jobs  []abi.Job
	after time.Duration
	want  []cmd
}

func resolve(seq uint64, result string) abi.Job {
	return abi.Job{Kind: abi.JobResolveActivity, Seq: seq, Result: []byte(result)}
}

func raiseCmd(seq uint64, target, name, data string) cmd {
	return cmd{Command: abi.Command{Kind: abi.CommandRaise, Seq: seq, Name: name, InstanceID: target, Input: []byte(data)}}
}

// scripts are the raw scripts: every orchestration of docs/conformance.md
// but Waiter and Queryable (which the others run), so every command kind.
var scripts = []script{
	{"Sequence", "sequence", `["a","b"]`, []step{
		{want: []cmd{schedule(1, "Echo", `"a"`)}},
		{jobs: []abi.Job{resolve(1, `"a"`)}, want: []cmd{schedule(2, "Echo", `"b"`)}},
		{jobs: []abi.Job{resolve(2, `"b"`)}, want: []cmd{complete(3, `["a","b"]`)}},
	}},
	{"FanOut", "fanout", `2`, []step{
		{want: []cmd{schedule(1, "Echo", `0`), schedule(2, "Echo", `1`)}},
		{jobs: []abi.Job{resolve(2, `1`)}},
		{jobs: []abi.Job{resolve(1, `0`)}, want: []cmd{complete(3, `[0,1]`)}},
	}},
	{"Fails", "fails", `"x"`, []step{
		{want: []cmd{schedule(1, "Boom", `"x"`)}},
		{jobs: []abi.Job{{Kind: abi.JobResolveActivity, Seq: 1, Failure: &abi.Failure{Message: "boom: x"}}}, want: []cmd{fail(2, "boom: x")}},
	}},
	{"Timer", "timer", `30`, []step{
		{want: []cmd{startTimer(1, 30*time.Second)}},
		{jobs: []abi.Job{{Kind: abi.JobFireTimer, Seq: 1}}, after: 30 * time.Second, want: []cmd{complete(2, `30`)}},
	}},
	{"Race", "race", `null`, []step{
		{want: []cmd{schedule(1, "Echo", `"fast"`), startTimer(2, time.Hour)}},
		{jobs: []abi.Job{resolve(1, `"fast"`)}, want: []cmd{cancel(abi.CommandCancelTimer, 3, 2), complete(4, `"fast"`)}},
	}},
	{"Events", "events", `null`, []step{
		{want: []cmd{wait(abi.CommandWaitEvent, 1, "first"), wait(abi.CommandWaitEventPersistent, 2, "second")}},
		{jobs: []abi.Job{{Kind: abi.JobResolveEvent, Seq: 2, Result: []byte(`2`)}}},
		{jobs: []abi.Job{{Kind: abi.JobResolveEvent, Seq: 1, Result: []byte(`null`)}}, want: []cmd{complete(3, `[null,2]`)}},
	}},
	{"Cancellable", "cancellable", `null`, []step{
		{want: []cmd{schedule(1, "Echo", `"never"`), startTimer(2, time.Hour), wait(abi.CommandWaitEvent, 3, "never"),
			wait(abi.CommandWaitEventPersistent, 4, "never-persistent"), startChild(5, "Waiter", `null`)}},
		{jobs: []abi.Job{{Kind: abi.JobCancel, Name: "stop"}}, want: []cmd{cancel(abi.CommandCancelActivity, 6, 1), cancel(abi.CommandCancelTimer, 7, 2),
			cancel(abi.CommandCancelWait, 8, 3), cancel(abi.CommandCancelWait, 9, 4), cancel(abi.CommandCancelChild, 10, 5), fail(11, "stop")}},
	}},
	{"Parent", "parent", `"x"`, []step{
		{want: []cmd{startChild(1, "Sequence", `["x"]`),
			{Command: abi.Command{Kind: abi.CommandStartChild, Seq: 2, Name: "Waiter", Input: []byte(`null`), Detached: true, InstanceID: "parent-waiter"}}}},
		{jobs: []abi.Job{{Kind: abi.JobResolveChild, Seq: 1, Result: []byte(`["x"]`)}}, want: []cmd{complete(3, `["x"]`)}},
	}},
	{"Countdown", "countdown", `1`, []step{
		{want: []cmd{schedule(1, "Echo", `1`)}},
		{jobs: []abi.Job{resolve(1, `1`)}, want: []cmd{{Command: abi.Command{Kind: abi.CommandContinueAsNew, Seq: 2, Output: []byte(`0`)}}}},
	}},
	{"Status", "status", `null`, []step{
		{want: []cmd{named(abi.CommandSetCustomStatus, 1, "working"), named(abi.CommandPatch, 2, "kit-change"), schedule(3, "Echo", `"patched"`)}},
		{jobs: []abi.Job{resolve(3, `"patched"`)}, want: []cmd{named(abi.CommandSetCustomStatus, 4, "done"), complete(5, `"patched"`)}},
	}},
	{"Raiser", "raiser", `"target"`, []step{
		{want: []cmd{raiseCmd(1, "target", "go", `"raised"`)}},
		{jobs: []abi.Job{{Kind: abi.JobResolveRaise, Seq: 1}}, want: []cmd{complete(2, `true`)}},
	}},
}

// activation is step i of s, live or replaying.
func (s *script) activation(i int, replaying bool) *abi.Activation {
	st := s.steps[i]
	jobs := st.jobs
	if i == 0 {
		jobs = []abi.Job{{Kind: abi.JobStart, Name: s.orchestration, InstanceID: s.id, Input: []byte(s.input)}}
	}
	return &abi.Activation{Time: kitStart.Add(st.after).UnixNano(), Replaying: replaying, Jobs: jobs}
}

// where names step i of s for a message.
func (s *script) where(i int) string {
	return fmt.Sprintf("%s(%s), activation %d (%s)", s.orchestration, s.input, i+1, describeJobs(s.activation(i, false).Jobs))
}

// describeJobs writes jobs briefly.
func describeJobs(jobs []abi.Job) string {
	var out []string
	for _, j := range jobs {
		switch j.Kind {
		case abi.JobStart:
			out = append(out, fmt.Sprintf("Start %s", j.Name))
		case abi.JobCancel:
			out = append(out, fmt.Sprintf("Cancel %q", j.Name))
		case abi.JobFireTimer:
			out = append(out, fmt.Sprintf("FireTimer %d", j.Seq))
		default:
			what := canonical(j.Result)
			if j.Failure != nil {
				what = fmt.Sprintf("failure %q", j.Failure.Message)
			}
			out = append(out, fmt.Sprintf("%s %d with %s", jobNames[j.Kind], j.Seq, what))
		}
	}
	return strings.Join(out, ", ")
}

var jobNames = map[abi.JobKind]string{
	abi.JobResolveActivity: "ResolveActivity", abi.JobResolveEvent: "ResolveEvent",
	abi.JobResolveChild: "ResolveChild", abi.JobResolveRaise: "ResolveRaise",
}

// A rawCase runs on the raw ABI.
type rawCase struct {
	name string
	run  func(ctx context.Context, p *host.Probe) error
}

var rawCases = []rawCase{
	{"unknown-orchestration", unknownOrchestration},
	{"commands", func(ctx context.Context, p *host.Probe) error {
		for i := range scripts {
			if _, err := runScript(ctx, p, &scripts[i], nil, nil); err != nil {
				return err
			}
		}
		return nil
	}},
	{"all-jobs-then-code", allJobsThenCode},
	{"replay-same-bytes", func(ctx context.Context, p *host.Probe) error {
		return again(ctx, p, "replayed on a fresh instance", true, nil)
	}},
	{"heap-independent", func(ctx context.Context, p *host.Probe) error {
		return again(ctx, p, "on a fresh instance whose heap the kit disturbed first", false, disturb)
	}},
}

// runScript runs s on a fresh instance, each activation after before (when
// set), and checks every answer: the commands s expects; with live set,
// the bytes of live's answers instead, each activation replaying. It
// returns the bytes of each answer.
func runScript(ctx context.Context, p *host.Probe, s *script, live [][]byte, before func(*host.ProbeInstance) error) ([][]byte, error) {
	inst, err := p.Start(ctx, s.id)
	if err != nil {
		return nil, fmt.Errorf("%s: the module does not start: %v", s.orchestration, err)
	}
	defer inst.Close()
	var got [][]byte
	v := newValidator()
	for i := range s.steps {
		a := s.activation(i, live != nil)
		if live != nil {
			a.Patches = patches(live[i])
		}
		if before != nil {
			if err := before(inst); err != nil {
				return nil, fmt.Errorf("%s: %v", s.where(i), err)
			}
		}
		raw, err := inst.Activate(a)
		if err != nil {
			return nil, fmt.Errorf("%s: durabox_activate failed: %v; a guest must answer every activation with commands, and never trap", s.where(i), err)
		}
		got = append(got, raw)
		if live != nil {
			if !bytes.Equal(raw, live[i]) {
				return nil, fmt.Errorf("%s: answered other bytes than the same activation did live\nlive:      %x\nthis time: %x\n%s", s.where(i), live[i], raw, commandsOf(live[i], raw))
			}
			continue
		}
		res, err := abi.DecodeActivationResult(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: the ActivationResult does not decode: %v (bytes %x)", s.where(i), err, raw)
		}
		if err := v.check(a.Jobs, res.Commands); err != nil {
			return nil, fmt.Errorf("%s: %v\nthe module answered\n%s", s.where(i), err, describeAll(res.Commands))
		}
		if err := compare(s.steps[i].want, res.Commands); err != nil {
			return nil, fmt.Errorf("%s: %v\nsee docs/conformance.md, %q", s.where(i), err, s.orchestration)
		}
	}
	return got, nil
}

// commandsOf describes what two answers hold, for a message.
func commandsOf(live, again []byte) string {
	l, err1 := abi.DecodeActivationResult(live)
	a, err2 := abi.DecodeActivationResult(again)
	if err1 != nil || err2 != nil {
		return "(one of them does not decode)"
	}
	return fmt.Sprintf("live it commanded\n%s\nthis time\n%s", describeAll(l.Commands), describeAll(a.Commands))
}

// patches are the change ids of the Patch commands in an answer: what a
// host tells a replaying guest that history records for its step.
func patches(raw []byte) []string {
	res, err := abi.DecodeActivationResult(raw)
	if err != nil {
		return nil
	}
	var ids []string
	for _, c := range res.Commands {
		if c.Kind == abi.CommandPatch {
			ids = append(ids, c.Name)
		}
	}
	return ids
}

// compare checks the commands of an answer against those expected.
func compare(want []cmd, got []abi.Command) error {
	for i := range max(len(want), len(got)) {
		if i < len(want) && i < len(got) && want[i].matches(got[i]) {
			continue
		}
		var exp strings.Builder
		for _, w := range want {
			exp.WriteString("\n  " + w.String())
		}
		if len(want) == 0 {
			exp.WriteString("\n  (no command)")
		}
		return fmt.Errorf("command %d differs: expected%s\nthe module answered\n%s", i+1, exp.String(), describeAll(got))
	}
	return nil
}

// again runs every script live, then once more on a fresh instance
// (replaying, or after disturb), and checks that every answer is the same
// bytes. A script whose live answers are wrong (the commands case says
// how) is left out, and named.
func again(ctx context.Context, p *host.Probe, how string, replaying bool, before func(*host.ProbeInstance) error) error {
	var unchecked []string
	for i := range scripts {
		s := &scripts[i]
		live, err := runScript(ctx, p, s, nil, nil)
		if err != nil {
			unchecked = append(unchecked, s.orchestration)
			continue
		}
		if replaying {
			_, err = runScript(ctx, p, s, live, before)
		} else {
			err = sameLive(ctx, p, s, live, before)
		}
		if err != nil {
			return fmt.Errorf("%s: %w\na guest's answers may depend only on the activations it was given (ABI.md, \"Instances\")", how, err)
		}
	}
	if len(unchecked) > 0 {
		return fmt.Errorf("%s: not checked for %s, whose commands are wrong (the commands case says how)", how, strings.Join(unchecked, ", "))
	}
	return nil
}

// sameLive runs s live again after before and checks the bytes.
func sameLive(ctx context.Context, p *host.Probe, s *script, live [][]byte, before func(*host.ProbeInstance) error) error {
	got, err := runScript(ctx, p, s, nil, before)
	if err != nil {
		return err
	}
	for i := range got {
		if !bytes.Equal(got[i], live[i]) {
			return fmt.Errorf("%s: answered other bytes than on an undisturbed instance\nundisturbed: %x\nthis time:   %x\n%s", s.where(i), live[i], got[i], commandsOf(live[i], got[i]))
		}
	}
	return nil
}

// disturb changes a guest's heap as a host's calls may: buffers asked of
// durabox_alloc and never used, of growing sizes, and the manifest asked
// for again and again.
func disturb(inst *host.ProbeInstance) error {
	for _, size := range []uint64{1 << 10, 64 << 10, 1 << 20, 3 << 20} {
		if _, err := inst.Call(abi.ExportAlloc, size); err != nil {
			return fmt.Errorf("durabox_alloc(%d) failed: %v", size, err)
		}
	}
	for range 8 {
		if _, err := inst.Exchange(abi.ExportDescribe, nil); err != nil {
			return fmt.Errorf("durabox_describe failed: %v", err)
		}
	}
	return nil
}

// unknownOrchestration starts an orchestration the module does not
// register: it must answer with one Fail that names it.
func unknownOrchestration(ctx context.Context, p *host.Probe) error {
	s := &script{orchestration: "NoSuchOrchestration", id: "unknown", input: `null`, steps: []step{{want: []cmd{fail(1, "NoSuchOrchestration")}}}}
	if _, err := runScript(ctx, p, s, nil, nil); err != nil {
		return fmt.Errorf("%w\nABI.md, \"An orchestration the module lacks\": answer a Start of an orchestration the module does not register with Fail(1, …) naming it and those it registers, without trapping", err)
	}
	return nil
}

// allJobsThenCode gives Race one activation that resolves both the
// activity and the timer: the guest applies both jobs before its code
// runs, so the select finds both resolved, nothing is left to cancel, and
// the activity, first in the select, wins.
func allJobsThenCode(ctx context.Context, p *host.Probe) error {
	s := &script{orchestration: "Race", id: "race-both", input: `null`, steps: []step{
		scripts[4].steps[0],
		{jobs: []abi.Job{resolve(1, `"fast"`), {Kind: abi.JobFireTimer, Seq: 2}}, after: time.Hour, want: []cmd{complete(3, `"fast"`)}},
	}}
	if _, err := runScript(ctx, p, s, nil, nil); err != nil {
		return fmt.Errorf("%w\nABI.md, \"All jobs, then the code\": apply every job of an activation before the orchestration's code runs", err)
	}
	return nil
}

// A validator checks a guest's answers as the host's engine does, across
// the activations of one execution: seqs in turn, cancels that name an
// open operation of their kind, nothing after the end, JSON that is JSON.
type validator struct {
	next uint64
	// open maps the seq of each open operation to the cancel command
	// that cancels it.
	open  map[uint64]abi.CommandKind
	ended bool
}

func newValidator() *validator { return &validator{next: 1, open: map[uint64]abi.CommandKind{}} }

// cancels names the cancel command of each kind of operation.
var cancels = map[abi.CommandKind]abi.CommandKind{
	abi.CommandScheduleActivity: abi.CommandCancelActivity, abi.CommandStartTimer: abi.CommandCancelTimer,
	abi.CommandWaitEvent: abi.CommandCancelWait, abi.CommandWaitEventPersistent: abi.CommandCancelWait,
	abi.CommandStartChild: abi.CommandCancelChild,
}

// check checks the commands answered to an activation of jobs.
func (v *validator) check(jobs []abi.Job, cmds []abi.Command) error {
	for _, j := range jobs {
		delete(v.open, j.Seq)
	}
	for i, c := range cmds {
		what := fmt.Sprintf("command %d, %s", i+1, describe(c))
		switch {
		case v.ended:
			return fmt.Errorf("%s comes after the orchestration ended (Complete, Fail or ContinueAsNew): nothing may follow them", what)
		case kindNames[c.Kind] == "":
			return fmt.Errorf("%s is of no kind ABI.md knows (1 to %d)", what, len(kindNames))
		case c.Seq != v.next:
			return fmt.Errorf("%s is numbered %d where %d was next: every command of every kind takes the next seq, from 1, across the activations of an execution (ABI.md, \"Every command takes a seq\")", what, c.Seq, v.next)
		}
		v.next++
		switch c.Kind {
		case abi.CommandCancelTimer, abi.CommandCancelActivity, abi.CommandCancelWait, abi.CommandCancelChild:
			if v.open[c.Target] != c.Kind {
				return fmt.Errorf("%s names command %d, which is not an open operation it cancels: a cancel command's target is the seq of an operation of its kind whose job has not come", what, c.Target)
			}
			delete(v.open, c.Target)
		case abi.CommandComplete, abi.CommandFail, abi.CommandContinueAsNew:
			v.ended = true
		case abi.CommandStartChild:
			if !c.Detached {
				v.open[c.Seq] = abi.CommandCancelChild
			}
		default:
			if k, ok := cancels[c.Kind]; ok {
				v.open[c.Seq] = k
			}
		}
		for _, data := range [][]byte{c.Input, c.Output} {
			if len(data) > 0 {
				if err := ijson.Check("its JSON", data); err != nil {
					return fmt.Errorf("%s: %v", what, err)
				}
			}
		}
	}
	return nil
}
