package guestkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/durabox/durabox/host"
)

// Status is a case's outcome on one runtime.
type Status string

// The outcomes of a case.
const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	// Skip is a case that does not apply to the module (the optional
	// Queryable, when the module does not register it).
	Skip Status = "SKIP"
)

// Result is one case's outcome on one runtime.
type Result struct {
	Case    string `json:"case"`
	Runtime string `json:"runtime"`
	Status  Status `json:"status"`
	// Message says, for a failure, what the kit expected, what the module
	// did and what to fix; for a skip, why.
	Message string `json:"message,omitempty"`
}

// Report is what Check found.
type Report struct {
	// SDK is what the module's manifest says it was built with; empty when
	// no runtime took the module.
	SDK     string   `json:"sdk"`
	Results []Result `json:"results"`
}

// Failed returns the results that failed.
func (r *Report) Failed() []Result {
	return slices.DeleteFunc(slices.Clone(r.Results), func(res Result) bool { return res.Status != Fail })
}

// Options choose what Check runs. The zero value runs every case on every
// runtime.
type Options struct {
	// Runtimes are the runtimes to run on, of host.Runtimes; nil means
	// every one.
	Runtimes []string
	// Run, when set, runs only the cases whose names it matches
	// ("manifest" always runs: the others need it).
	Run *regexp.Regexp
}

// Cases lists the names of the kit's cases, in the order Check runs them.
func Cases() []string {
	names := []string{manifestCase}
	for _, c := range rawCases {
		names = append(names, c.name)
	}
	for _, c := range hostCases {
		names = append(names, c.name)
	}
	return append(names, liveEqualsReplayed)
}

// Check runs the kit on the module in wasm and reports each case's
// outcome on each runtime. A module that fails a case is in the report;
// the error is for the kit itself (a runtime that is unknown or does not
// start, a temporary directory it cannot make).
func Check(ctx context.Context, wasm []byte, opts Options) (*Report, error) {
	runtimes := opts.Runtimes
	if runtimes == nil {
		runtimes = host.Runtimes
	}
	for _, rt := range runtimes {
		if !slices.Contains(host.Runtimes, rt) {
			return nil, fmt.Errorf("guestkit: no runtime %q: the runtimes are %s", rt, strings.Join(host.Runtimes, ", "))
		}
	}
	dir, err := os.MkdirTemp("", "durabox-conformance-")
	if err != nil {
		return nil, fmt.Errorf("guestkit: %w", err)
	}
	defer os.RemoveAll(dir)
	report := &Report{}
	for _, rt := range runtimes {
		k := &kit{ctx: ctx, wasm: wasm, runtime: rt, dir: dir, only: opts.Run, report: report}
		if err := k.run(); err != nil {
			return nil, err
		}
	}
	return report, nil
}

// Run runs the kit on the module at path on runtime (one of
// host.Runtimes), each case a subtest of t that fails with the case's
// message: the one line an SDK's tests need.
func Run(t *testing.T, path, runtime string) {
	t.Helper()
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("guestkit: %v", err)
	}
	report, err := Check(context.Background(), wasm, Options{Runtimes: []string{runtime}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range report.Results {
		t.Run(r.Case, func(t *testing.T) {
			switch r.Status {
			case Fail:
				t.Errorf("%s on %s: %s", r.Case, r.Runtime, r.Message)
			case Skip:
				t.Skipf("%s on %s: %s", r.Case, r.Runtime, r.Message)
			}
		})
	}
}

// kit runs the cases on one runtime.
type kit struct {
	ctx     context.Context
	wasm    []byte
	runtime string
	// dir holds the stores and the compiled modules of the hosts.
	dir    string
	only   *regexp.Regexp
	report *Report
	// queryable says the module registers the optional Queryable.
	queryable bool
}

// compiled is the directory of the modules the kit's hosts compile.
func (k *kit) compiled() string { return filepath.Join(k.dir, "compiled") }

// selected reports whether the case name is to run.
func (k *kit) selected(name string) bool { return k.only == nil || k.only.MatchString(name) }

// add records a case's outcome: err nil passes, a skipped one skips.
func (k *kit) add(name string, err error) {
	r := Result{Case: name, Runtime: k.runtime, Status: Pass}
	var s skipped
	switch {
	case errors.As(err, &s):
		r.Status, r.Message = Skip, string(s)
	case err != nil:
		r.Status, r.Message = Fail, err.Error()
	}
	k.report.Results = append(k.report.Results, r)
}

// skipped is the error of a case that does not apply, saying why.
type skipped string

func (s skipped) Error() string { return string(s) }

// run runs every selected case on k's runtime.
func (k *kit) run() error {
	probe, err := host.NewProbe(k.ctx, k.wasm, host.Options{Runtime: k.runtime, CacheDir: k.compiled()})
	if err != nil {
		if refusedModule(err) {
			k.add(manifestCase, fmt.Errorf("a host refuses the module, so no case can run: %v (durabox check FILE.wasm says the same)", err))
			return nil
		}
		return fmt.Errorf("guestkit: %w", err)
	}
	defer probe.Close(k.ctx)
	if k.report.SDK == "" {
		k.report.SDK = probe.Manifest().SDK
	}
	k.queryable = slices.Contains(probe.Manifest().Orchestrations, queryableName)
	// A module that lacks names still runs the cases that do not need
	// them: an SDK on its way to conformance sees how far it has come.
	k.add(manifestCase, checkManifest(probe))
	for _, c := range rawCases {
		if k.selected(c.name) {
			k.add(c.name, c.run(k.ctx, probe))
		}
	}
	return k.runHostCases()
}
