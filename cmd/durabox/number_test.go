package main

import "testing"

// TestNumericFlagsNameTheirRange gives each numeric flag of the client
// commands a value it cannot take (below its range, above it, not a
// number): each is refused as a usage error that names the value, the
// flag and the range, before anything is asked of the host.
//
// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestNumericFlagsNameTheirRange(t *testing.T) {
	const (
		execution = `it must be a whole number, 1 or more (1 is the first execution; leave --execution out for the current one)`
		toEvent   = `it must be a whole number, 1 or more (the last event to keep: durabox history ID numbers them)`
		limit     = `it must be a whole number from 1 to 1000`
		parallel  = `it must be a whole number, 0 or more (0, the default, is one per CPU of the host)`
		timeout   = `it must be a duration of 0 or more, such as 30s, 5m or 1h30m (0, the default, waits as long as it takes)`
	)
	var tests []cliTest
	for _, c := range []struct {
		args []string
		flag string
		want string
	}{
		{[]string{"history", "done", "--execution", "0"}, "execution", execution},
		{[]string{"history", "done", "--execution", "-1"}, "execution", execution},
		{[]string{"history", "done", "--execution", "two"}, "execution", execution},
		{[]string{"replay", "done", "--execution", "0"}, "execution", execution},
		{[]string{"replay", "done", "--execution", "-3"}, "execution", execution},
		{[]string{"reset", "done", "--to-event", "-1"}, "to-event", toEvent},
		{[]string{"reset", "done", "--to-event", "0"}, "to-event", toEvent},
		{[]string{"list", "--limit", "0"}, "limit", limit},
		{[]string{"list", "--limit", "1001"}, "limit", limit},
		{[]string{"list", "--limit", "many"}, "limit", limit},
		{[]string{"upgrade", "Greeting", "--parallel", "-1"}, "parallel", parallel},
		{[]string{"start", "Greeting", "--wait", "--timeout", "-1s"}, "timeout", timeout},
		{[]string{"start", "Greeting", "--wait", "--timeout", "soon"}, "timeout", timeout},
	} {
		value := c.args[len(c.args)-1]
		tests = append(tests, cliTest{
			name:       c.args[0] + " --" + c.flag + " " + value,
			args:       c.args,
			wantCode:   2,
			wantStderr: "durabox " + c.args[0] + `: invalid value "` + value + `" for flag --` + c.flag + ": " + c.want + "\n",
			wantUsage:  true,
		})
	}
	runTests(t, tests)
}
