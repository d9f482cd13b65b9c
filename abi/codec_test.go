package abi

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	a := &Activation{Time: -5, Replaying: true, Jobs: []Job{
		{Kind: JobStart, Name: "Greeting", InstanceID: "i-1", Input: []byte(`"world"`)},
		{Kind: JobResolveActivity, Seq: 300, Result: []byte(`{"a":1}`)},
		{Kind: JobResolveActivity, Seq: 2, Failure: &Failure{}},
		{Kind: JobFireTimer, Seq: 1 << 40, Failure: &Failure{Message: "m", Details: "d"}},
	}}
	r := &ActivationResult{Commands: []Command{
		{Kind: CommandScheduleActivity, Seq: 1, Name: "SayHello", Input: []byte(`"x"`), TimeoutMillis: 30000},
		{Kind: CommandStartTimer, Seq: 2, Delay: 1500000000},
		{Kind: CommandComplete, Seq: 3, Output: []byte(`null`)},
		{Kind: CommandFail, Seq: 4, Failure: &Failure{Message: "boom", Details: "stack"}},
		{Kind: CommandCancelTimer, Seq: 5, Target: 2},
		{Kind: CommandCancelActivity, Seq: 6, Target: 1},
		{Kind: CommandStartChild, Seq: 7, Name: "Child", Input: []byte(`1`), InstanceID: "kid", Detached: true},
		{Kind: CommandPatch, Seq: 8, Name: "fix-rounding"},
	}}
	// An empty element of a repeated field travels too.
	m := &Manifest{SDK: "durabox-go/0.1", Orchestrations: []string{"A", "", "B"}, Activities: []string{"C"}}
	req := &ActivityRequest{Name: "SayHello", Input: []byte(`"x"`), InstanceID: "i", Attempt: 3}
	res := &ActivityResult{Output: []byte(`1`), Failure: &Failure{Message: "no"}}
	hreq := &HTTPRequest{Method: "POST", URL: "http://127.0.0.1:8080/x", Header: []string{"A: 1", "B: 2"}, Body: []byte("hi")}
	hres := &HTTPResponse{Status: 201, Header: []string{"C: 3"}, Body: []byte("ok"), Error: "e"}

	tests := []struct {
		name   string
		in     any
		encode func() []byte
		decode func([]byte) (any, error)
	}{
		{"Activation", a, func() []byte { return EncodeActivation(a) }, func(b []byte) (any, error) { return DecodeActivation(b) }},
		{"ActivationResult", r, func() []byte { return EncodeActivationResult(r) }, func(b []byte) (any, error) { return DecodeActivationResult(b) }},
		{"Manifest", m, func() []byte { return EncodeManifest(m) }, func(b []byte) (any, error) { return DecodeManifest(b) }},
		{"ActivityRequest", req, func() []byte { return EncodeActivityRequest(req) }, func(b []byte) (any, error) { return DecodeActivityRequest(b) }},
		{"ActivityResult", res, func() []byte { return EncodeActivityResult(res) }, func(b []byte) (any, error) { return DecodeActivityResult(b) }},
		{"HTTPRequest", hreq, func() []byte { return EncodeHTTPRequest(hreq) }, func(b []byte) (any, error) { return DecodeHTTPRequest(b) }},
		{"HTTPResponse", hres, func() []byte { return EncodeHTTPResponse(hres) }, func(b []byte) (any, error) { return DecodeHTTPResponse(b) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.decode(tt.encode())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.in) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tt.in)
			}
		})
	}
}

// An activation is the same size, its fields in the same places, whether
// the host is replaying or not: a guest must not allocate differently for a
// replay. (A replayed step's patches stay with the host, which answers the
// patched import from them.)
func TestActivationShapeDoesNotDependOnReplaying(t *testing.T) {
	t.Parallel()
	a := Activation{Time: 1795348800123456789, Jobs: []Job{{Kind: JobResolveActivity, Seq: 3, Result: []byte(`"x"`)}}}
	live := EncodeActivation(&a)
	a.Replaying, a.Patches = true, []string{"fix-rounding"}
	replay := EncodeActivation(&a)
	diff := 0
	for i := range live {
		if i < len(replay) && live[i] != replay[i] {
			diff++
		}
	}
	if len(live) != len(replay) || diff != 1 {
		t.Fatalf("live % x\nreplay % x\nwant the same bytes but for the replaying flag's value", live, replay)
	}
	for _, b := range [][]byte{live, replay} {
		if got, err := DecodeActivation(b); err != nil || got.Replaying != (&b[0] == &replay[0]) {
			t.Fatalf("decoded %+v, %v", got, err)
		}
	}
}

// The wire form is fixed by ABI.md, byte for byte: a nested message is its
// key, its length and its fields, whatever the encoder does to build it.
// The job here is over 127 bytes, so its length takes two bytes.
func TestNestedMessageBytes(t *testing.T) {
	t.Parallel()
	result := bytes.Repeat([]byte("r"), 200)
	got := EncodeActivation(&Activation{Jobs: []Job{{Kind: JobResolveActivity, Seq: 1, Result: result}, {Kind: JobFireTimer, Seq: 2}}})
	want := []byte{
		0x04, 0x00, // replaying: false
		0x07, 0xcf, 0x01, // job, 207 bytes
		0x02, 0x02, // kind: ResolveActivity
		0x04, 0x01, // seq: 1
		0x0d, 0xc8, 0x01, // result, 200 bytes
	}
	want = append(want, result...)
	want = append(want, 0x07, 0x04, 0x02, 0x03, 0x04, 0x02) // job, 4 bytes: kind FireTimer, seq 2
	if !bytes.Equal(got, want) {
		t.Fatalf("got  % x\nwant % x", got, want)
	}

	// A command of 20,008 bytes: its length takes three bytes.
	output := bytes.Repeat([]byte("o"), 20000)
	got = EncodeActivationResult(&ActivationResult{Commands: []Command{{Kind: CommandComplete, Seq: 9, Output: output}}})
	want = []byte{
		0x03, 0xa8, 0x9c, 0x01, // command, 20,008 bytes
		0x02, 0x03, // kind: Complete
		0x04, 0x09, // seq: 9
		0x0d, 0xa0, 0x9c, 0x01, // output, 20,000 bytes
	}
	if want = append(want, output...); !bytes.Equal(got, want) {
		t.Fatalf("got  % x…\nwant % x…", got[:16], want[:16])
	}
}

func TestUnknownFieldsAreSkipped(t *testing.T) {
	t.Parallel()
	var e encoder
	e.uint(99, 7)
	e.string(98, "from a newer host")
	b := append(e.buf, EncodeActivation(&Activation{Time: 42})...)
	a, err := DecodeActivation(b)
	if err != nil || a.Time != 42 {
		t.Fatalf("got %+v, %v", a, err)
	}
}

func TestMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"truncated key", []byte{0x80}, "abi: malformed message: Activation: bad field key"},
		{"truncated value", []byte{0x02}, "abi: malformed message: Activation: field 1: bad value"},
		{"length past the end", []byte{0x07, 0x05, 'a'}, "abi: malformed message: Activation: field 3: length 5 runs past the end"},
		{"bad nested job", []byte{0x07, 0x01, 0x80}, "abi: malformed message: Job: bad field key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeActivation(tt.in)
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestPackRegion(t *testing.T) {
	t.Parallel()
	addr, n := UnpackRegion(PackRegion(0xdeadbeef, 0x12345678))
	if addr != 0xdeadbeef || n != 0x12345678 {
		t.Fatalf("got %x %x", addr, n)
	}
}

// FuzzDecode checks that no input makes a decoder panic, and that what
// decodes re-encodes to something that decodes to the same value.
func FuzzDecode(f *testing.F) {
	f.Add(EncodeActivation(&Activation{Time: 1, Jobs: []Job{{Kind: JobStart, Name: "x", Failure: &Failure{Message: "m"}}}}))
	f.Add(EncodeActivationResult(&ActivationResult{Commands: []Command{{Kind: CommandStartTimer, Delay: -1}}}))
	f.Add([]byte{0x07, 0x05, 'a'})
	f.Fuzz(func(t *testing.T, b []byte) {
		if a, err := DecodeActivation(b); err == nil {
			again, err := DecodeActivation(EncodeActivation(a))
			if err != nil || !reflect.DeepEqual(normalize(a), normalize(again)) {
				t.Fatalf("re-encoding changed %+v into %+v (%v)", a, again, err)
			}
		}
		if r, err := DecodeActivationResult(b); err == nil {
			if _, err := DecodeActivationResult(EncodeActivationResult(r)); err != nil {
				t.Fatal(err)
			}
		}
		_, _ = DecodeManifest(b)
		_, _ = DecodeActivityRequest(b)
		_, _ = DecodeActivityResult(b)
		_, _ = DecodeHTTPRequest(b)
		_, _ = DecodeHTTPResponse(b)
	})
}

// normalize drops distinctions the encoding does not keep (nil vs empty).
func normalize(a *Activation) *Activation {
	c := *a
	c.Jobs = nil
	for _, j := range a.Jobs {
		if len(j.Input) == 0 {
			j.Input = nil
		}
		if len(j.Result) == 0 {
			j.Result = nil
		}
		c.Jobs = append(c.Jobs, j)
	}
	return &c
}

func TestActivationPatched(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a    Activation
		want bool
	}{
		{Activation{}, true},
		{Activation{Replaying: true}, false},
		{Activation{Replaying: true, Patches: []string{"other", "fix"}}, true},
		{Activation{Replaying: true, Patches: []string{"other"}}, false},
	} {
		if got := tt.a.Patched("fix"); got != tt.want {
			t.Errorf("%+v: Patched(fix) = %v, want %v", tt.a, got, tt.want)
		}
	}
}

// Decoding into an activation that holds another leaves nothing of the old
// one: not its jobs beyond the new ones, nor a field the new one omits.
func TestDecodeActivationInto(t *testing.T) {
	t.Parallel()
	a := &Activation{Time: 9, Replaying: true, Jobs: []Job{
		{Kind: JobStart, Name: "A", Input: []byte(`1`)},
		{Kind: JobResolveActivity, Seq: 4, Result: []byte(`2`), Failure: &Failure{Message: "m"}},
	}}
	want := &Activation{Jobs: []Job{{Kind: JobFireTimer, Seq: 2}}} // time 0: not written
	if err := DecodeActivationInto(a, EncodeActivation(want)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("got %+v\nwant %+v", a, want)
	}
	if err := DecodeActivationInto(a, []byte{0x07, 0x09}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a job running past the end: %v, want ErrMalformed", err)
	}
}
