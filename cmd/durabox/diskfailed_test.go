package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/internal/faultfs"
	"github.com/durabox/durabox/internal/guestbuild"
)

// faultyHost is a durabox serve process whose SQLite file is on a disk
// the test makes slow or failing (internal/faultfs), and the starts it
// acknowledged.
type faultyHost struct {
	t     *testing.T
	ctx   context.Context
	disk  *faultfs.FS
	serve *serveProcess
	url   string
	mu    sync.Mutex
	acked []string
}

func newFaultyHost(t *testing.T, ctx context.Context) *faultyHost {
	t.Helper()
	disk := faultfs.Mount(t)
	s := startServer(t, filepath.Join(disk.Dir(), "durabox.db"))
	for _, dir := range []string{"examples/wasm/hello", "examples/wasm/approval"} {
		wasm, err := guestbuild.Wasm(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.client().Deploy(ctx, wasm); err != nil {
			t.Fatal(err)
		}
	}
	return &faultyHost{t: t, ctx: ctx, disk: disk, serve: s, url: "http://" + s.addr}
}

// call asks the host; it may be called from any goroutine.
func (f *faultyHost) call(method, path, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(f.ctx, method, f.url+path, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// start starts an instance of Greeting with id, and notes it if the host
// acknowledged it (201, or 409 for one it acknowledged before).
func (f *faultyHost) start(id string) (int, string, error) {
	code, body, err := f.call("POST", "/v1/instances", fmt.Sprintf(`{"name": "Greeting", "input": "world", "id": %q}`, id))
	if err == nil && (code == http.StatusCreated || code == http.StatusConflict) {
		f.mu.Lock()
		f.acked = append(f.acked, id)
		f.mu.Unlock()
	}
	return code, body, err
}

// starts starts n instances at once, named prefix-0…, and fails the test
// if one is not acknowledged.
func (f *faultyHost) starts(prefix string, n int) {
	f.t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			if code, body, err := f.start(fmt.Sprintf("%s-%d", prefix, i)); err != nil || code != http.StatusCreated {
				errs[i] = fmt.Errorf("start %s-%d: %d %s %v", prefix, i, code, body, err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			f.t.Fatal(err)
		}
	}
}

// lost waits for every acknowledged start to complete, and returns how
// many did not complete with their greeting.
func (f *faultyHost) lost() int {
	f.t.Helper()
	lost := 0
	for _, id := range f.acked {
		inst, err := f.serve.client().Wait(f.ctx, id)
		if err != nil || inst.Status != engine.StatusCompleted || string(inst.Result) != `"Hello, world!"` {
			f.t.Errorf("%s: %+v, %v; want Completed with Hello, world!", id, inst, err)
			lost++
		}
	}
	return lost
}

// TestSlowFsync: on a disk whose every fsync takes 2 s, durabox serve takes
// starts and raises at once and answers each once it is on disk, slower,
// none with an error; /readyz stays ready; every instance runs to its end
// once the disk is fast again (under 2 s a sync, the test would wait out its
// instances' turns' syncs, which check nothing more).
func TestSlowFsync(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := newFaultyHost(t, ctx)
	f.starts("before", 5)
	const approvals = 10
	for i := range approvals {
		if code, body, err := f.call("POST", "/v1/instances", fmt.Sprintf(`{"name": "Approval", "input": {"item": "laptop", "timeout": "1h"}, "id": "approval-%d"}`, i)); err != nil || code != http.StatusCreated {
			t.Fatalf("start approval-%d: %d %s %v", i, code, body, err)
		}
	}
	// Each waits for its decision before it is raised: a positional event
	// raised while no wait is active is dropped.
	for i := range approvals {
		for {
			inst, err := f.serve.client().Instance(ctx, fmt.Sprint("approval-", i))
			if err != nil {
				t.Fatal(err)
			}
			if inst.CustomStatus == "waiting for a decision on laptop" {
				break
			}
			time.Sleep(10 * time.Millisecond) // a poll: it decides nothing
		}
	}
	const delay = 2 * time.Second
	f.disk.Set(faultfs.Faults{FsyncDelay: delay})
	began := time.Now()
	done := make(chan struct{})
	readyz := make(chan []string, 1)
	go func() {
		// Asked every 100 ms while the starts wait for their syncs.
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		var answers []string
		for {
			select {
			case <-done:
				readyz <- answers
				return
			case <-tick.C:
			}
			code, body, err := f.call("GET", "/readyz", "")
			answers = append(answers, fmt.Sprint(code, " ", body, " ", err))
		}
	}()
	const n = 40
	var wg sync.WaitGroup
	raised := make([]string, approvals)
	for i := range approvals {
		wg.Go(func() {
			code, body, err := f.call("POST", fmt.Sprintf("/v1/instances/approval-%d/events", i), `{"name": "Approval", "data": {"approved": true, "by": "ada"}}`)
			if err != nil || code/100 != 2 {
				raised[i] = fmt.Sprintf("raise to approval-%d: %d %s %v", i, code, body, err)
			}
		})
	}
	f.starts("slow", n)
	wg.Wait()
	took := time.Since(began)
	for _, r := range raised {
		if r != "" {
			t.Fatal(r)
		}
	}
	close(done)
	answers := <-readyz
	for _, a := range answers {
		if !strings.HasPrefix(a, "200 ") {
			t.Fatalf("readyz while fsyncs are slow: %s; want 200", a)
		}
	}
	if took < delay {
		t.Fatalf("%d starts took %v on a disk whose fsyncs take %v: the starts did not wait for the disk", n, took, delay)
	}
	f.disk.Set(faultfs.Faults{})
	lost := f.lost()
	for i := range approvals {
		inst, err := f.serve.client().Wait(ctx, fmt.Sprint("approval-", i))
		if err != nil || inst.Status != engine.StatusCompleted || !strings.Contains(string(inst.Result), "approved by ada") {
			t.Errorf("approval-%d: %+v, %v; want Completed, approved by ada", i, inst, err)
			lost++
		}
	}
	t.Logf("faultio: fsync %v: %d starts and %d raises (answered in %v, every one 2xx; /readyz 200 all %d times asked meanwhile), %d acknowledged, %d lost", delay, n, approvals, took.Round(100*time.Millisecond), len(answers), len(f.acked)+approvals, lost)
}

// TestDiskFailsWrites: on a disk that fails writes (EIO), then fsyncs,
// a host refuses starts with 503 saying the disk failed the write and
// what became of it, reports not ready with the reason, and stays up;
// once the disk works, it is ready and takes work again by itself, a
// start the disk failed asked again is taken, and every acknowledged
// start runs to its end: none lost, none failed as poison.
func TestDiskFailsWrites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		faults faultfs.Faults
		says   string
	}{
		{"write EIO", faultfs.Faults{FailWrites: true}, "nothing of the write was written; ask again once the disk works"},
		{"fsync EIO", faultfs.Faults{FailFsyncs: true}, "the disk failed to sync it, so it was not acknowledged, and it may or may not be kept; ask again once the disk works"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			f := newFaultyHost(t, ctx)
			// The fault comes as the host runs their turns.
			f.starts("before", 5)
			f.disk.Set(tc.faults)
			const n = 20
			var refused []string
			for i := range n {
				id := fmt.Sprint("failing-", i)
				code, body, err := f.start(id)
				if err != nil {
					t.Fatal(err)
				}
				if code != http.StatusServiceUnavailable || !strings.Contains(body, "the disk holding the database failed a write") || !strings.Contains(body, tc.says) {
					t.Fatalf("a start on a failing disk: %d %s; want 503 saying %q", code, body, tc.says)
				}
				refused = append(refused, id)
			}
			if code, body, err := f.call("GET", "/readyz", ""); err != nil || code != http.StatusServiceUnavailable || !strings.Contains(body, "the disk holding the database failed a write") {
				t.Fatalf("readyz on a failing disk: %d %s %v; want 503 saying the disk failed a write", code, body, err)
			}
			// The host tries the turns it was running, fails to commit
			// them, and waits for the disk: it takes no turn again before
			// a write succeeds, where taking one counts a delivery of it
			// (whenever that write, a lease's, needs no sync), and a turn
			// delivered 8 times fails its instance as poison.
			notCommitted := regexp.MustCompile(`turn not committed; it will run again" instance=(\S+)`)
			for strings.Count(f.serve.output(), "host: waiting for the disk to take writes again: sqlite: the disk holding the database failed a write") < 3 {
				if ctx.Err() != nil {
					t.Fatalf("the host did not wait for the disk:\n%s", f.serve.output())
				}
				counts := map[string]int{}
				for _, m := range notCommitted.FindAllStringSubmatch(f.serve.output(), -1) {
					if counts[m[1]]++; counts[m[1]] > 1 {
						t.Fatalf("the host took the turn of %s again on a failing disk, and did not wait for it:\n%s", m[1], f.serve.output())
					}
				}
				time.Sleep(10 * time.Millisecond) // a poll of the log: it decides nothing
			}
			failed := f.disk.Set(faultfs.Faults{})
			if code, body, err := f.call("GET", "/readyz", ""); err != nil || code != http.StatusOK {
				t.Fatalf("readyz once the disk works: %d %s %v", code, body, err)
			}
			f.starts("after", 5)
			for _, id := range refused {
				// Asked again: taken, or, if the failed sync kept it after
				// all, refused as started (409), which is acknowledged too.
				if code, body, err := f.start(id); err != nil || (code != http.StatusCreated && code != http.StatusConflict) {
					t.Fatalf("start %s asked again once the disk works: %d %s %v", id, code, body, err)
				}
			}
			t.Logf("faultio: %s: %d starts refused with 503 (the disk failed %d writes or syncs), asked again and taken; %d acknowledged, %d lost", tc.name, len(refused), failed, len(f.acked), f.lost())
		})
	}
}
