package abi_test

import (
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/durabox/durabox/abi"
)

// exampleBytes is ABI.md's "Example bytes" block: the example messages as
// the host's codec encodes them, so that the hex in the reference cannot
// drift from what a host sends and expects.
func exampleBytes() string {
	activation := abi.EncodeActivation(&abi.Activation{Time: 1_700_000_000_000_000_000, Jobs: []abi.Job{
		{Kind: abi.JobStart, Name: "Greeting", InstanceID: "hello-1", Input: []byte(`"world"`)},
	}})
	result := abi.EncodeActivationResult(&abi.ActivationResult{Commands: []abi.Command{
		{Kind: abi.CommandScheduleActivity, Seq: 1, Name: "SayHello", Input: []byte(`"world"`)},
	}})
	return "```\nactivation (" + strconv.Itoa(len(activation)) + " bytes):\n" + dump(activation) +
		"\nresult (" + strconv.Itoa(len(result)) + " bytes):\n" + dump(result) + "```\n"
}

// dump writes b as hex, 16 bytes a line.
func dump(b []byte) string {
	var s strings.Builder
	for len(b) > 0 {
		n := min(16, len(b))
		for i, c := range b[:n] {
			if i > 0 {
				s.WriteByte(' ')
			}
			s.WriteString(hex.EncodeToString([]byte{c}))
		}
		s.WriteByte('\n')
		b = b[n:]
	}
	return s.String()
}

// TestABIExampleBytesAreTheCodecs holds ABI.md's example bytes to the
// codec.
func TestABIExampleBytesAreTheCodecs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("ABI.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := exampleBytes(); !strings.Contains(string(doc), want) {
		t.Errorf("ABI.md lacks the example bytes the codec gives; put this block under \"Example bytes\":\n%s", want)
	}
}
