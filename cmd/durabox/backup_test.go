package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/testhost"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

// histories reads the history of every instance of the store at path,
// which no host holds, by id.
func histories(t *testing.T, path string) map[string][]engine.Event {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := map[string][]engine.Event{}
	for q := (store.InstanceQuery{Limit: 500}); ; {
		page, err := st.ListInstances(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, inst := range page.Instances {
			if out[inst.ID], err = st.History(context.Background(), inst.ID, 0); err != nil {
				t.Fatal(err)
			}
		}
		if page.Next == "" {
			return out
		}
		q.After = page.Next
	}
}

// timeless is a history without the times its events were recorded at,
// which differ between two hosts that ran the same steps, and without
// its timers' due times, which are the time of the turn that made them
// plus the timer's length: a turn the restored host ran after the backup
// made its timer due an hour after its own time.
func timeless(events []engine.Event) []engine.Event {
	out := make([]engine.Event, len(events))
	for i, ev := range events {
		ev.Time, ev.FireAt = time.Time{}, nil
		out[i] = ev
	}
	return out
}

// TestBackupUnderLoadRestores: a backup taken while a host starts and runs
// instances is restored to a new file (restore refuses the file the host
// holds), and a host on the restored file has every instance the backup
// holds, each history as the first host had it, and finishes those left
// unfinished: their histories end as the first host's did.
func TestBackupUnderLoadRestores(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var modules [][]byte
	for _, dir := range []string{"examples/wasm/hello", "examples/wasm/approval"} {
		wasm, err := guestbuild.Wasm(dir)
		if err != nil {
			t.Fatal(err)
		}
		modules = append(modules, wasm)
	}
	dir := t.TempDir()
	served, backup, restored := filepath.Join(dir, "served.db"), filepath.Join(dir, "backup.db"), filepath.Join(dir, "restored.db")
	a := testhost.At(t, served, host.Options{CacheDir: t.TempDir()}, modules...)
	var approvals []string
	for i := range 10 {
		id := fmt.Sprintf("approval-%d", i)
		if _, err := a.Start(ctx, "Approval", json.RawMessage(`{"item": "laptop", "timeout": "1h"}`), id); err != nil {
			t.Fatal(err)
		}
		approvals = append(approvals, id)
	}
	// The load: instances started, and run, before, while and after the
	// backup copies the file.
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		greeted []string
	)
	stop, fifty := make(chan struct{}), make(chan struct{})
	var started sync.Once
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer started.Do(func() { close(fifty) })
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id, err := a.Start(ctx, "Greeting", json.RawMessage(`"world"`), fmt.Sprintf("greeting-%04d", i))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			greeted = append(greeted, id)
			mu.Unlock()
			if i == 49 {
				started.Do(func() { close(fifty) })
			}
		}
	}()
	<-fifty
	code, stdout, stderr := durabox("backup", "--db", served, "-o", backup)
	if code != 0 || !strings.HasPrefix(stdout, "backed up "+served+" to "+backup+": ") {
		t.Fatalf("backup: exit code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	close(stop)
	wg.Wait()

	code, _, stderr = durabox("restore", "--from", backup, "--db", served)
	if want := fmt.Sprintf("durabox restore: sqlite: restore to %s: a host is serving it (pid %d); stop the host first, then restore\n", served, os.Getpid()); code != 1 || stderr != want {
		t.Fatalf("restore onto the served file: exit code %d, stderr %q\nwant %q", code, stderr, want)
	}
	code, stdout, stderr = durabox("restore", "--from", backup, "--db", restored)
	if code != 0 || stdout != "restored "+backup+" to "+restored+"\n" {
		t.Fatalf("restore: exit code %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	// What the backup holds is what the served file held: each history a
	// beginning of the one the first host has now.
	copied := histories(t, restored)
	unfinished := 0
	for id, events := range copied {
		now, err := a.History(ctx, id)
		if err != nil {
			t.Fatalf("%s is in the backup, and not on the first host: %v", id, err)
		}
		if len(events) > len(now) || len(events) > 0 && !reflect.DeepEqual(events, now[:len(events)]) {
			t.Fatalf("%s: the backup's history\n%v\nis not a beginning of the first host's\n%v", id, events, now)
		}
		if len(events) == 0 || !events[len(events)-1].IsTerminal() {
			unfinished++
		}
	}
	for _, id := range approvals {
		if _, ok := copied[id]; !ok {
			t.Fatalf("the backup lacks %s", id)
		}
	}
	t.Logf("the backup holds %d instances, %d of them unfinished; the first host started %d", len(copied), unfinished, len(approvals)+len(greeted))

	// A host on the restored file finishes them, as the first host does.
	b := testhost.At(t, restored, host.Options{CacheDir: t.TempDir()})
	for _, h := range []*host.Host{a, b} {
		for _, id := range approvals {
			// Raised once it waits: an event raised before its wait is
			// dropped, and a loaded machine may not have run the turn that
			// waits on the restored host yet.
			for {
				inst, err := h.Instance(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(inst.CustomStatus, "waiting for a decision") {
					break
				}
				select {
				case <-ctx.Done():
					t.Fatalf("%s did not wait for its Approval: %+v", id, inst)
				case <-time.After(20 * time.Millisecond):
				}
			}
			if err := h.Raise(ctx, id, "Approval", json.RawMessage(`{"approved": true, "by": "ada"}`), false); err != nil {
				t.Fatal(err)
			}
		}
	}
	for id := range copied {
		for _, h := range []*host.Host{a, b} {
			if inst, err := h.Wait(ctx, id); err != nil || inst.Status != engine.StatusCompleted {
				t.Fatalf("%s: %+v, %v; want Completed", id, inst, err)
			}
		}
		ha, err := a.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		hb, err := b.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(timeless(ha), timeless(hb)) {
			t.Fatalf("%s: the restored host's history\n%v\nis not the first host's\n%v", id, hb, ha)
		}
	}
}

// TestBackupAndRestoreRefusals: backup and restore refuse what they cannot
// do, saying what to do instead.
func TestBackupAndRestoreRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "durabox.db")
	newDB(t, db)
	tests := []struct {
		args []string
		code int
		want string // the first line of stderr
	}{
		{[]string{"backup", "--db", db}, 2, "durabox backup: --db FILE and -o COPY are required"},
		{[]string{"backup", "--db", "postgres://localhost/x", "-o", "x.db"}, 2, `durabox backup: backup copies a SQLite file; back up a PostgreSQL database with pg_dump (docs/operator.md, "Backups")`},
		{[]string{"backup", "--db", db, "-o", db}, 1, "durabox backup: sqlite: backup to " + db + ": the file exists; name a new file, or remove it first"},
		{[]string{"restore", "--from", db}, 2, "durabox restore: --from COPY and --db FILE are required"},
		{[]string{"restore", "--from", db, "--db", "postgres://localhost/x"}, 2, `durabox restore: restore restores a SQLite file; restore a PostgreSQL database with pg_restore (docs/operator.md, "Backups")`},
		{[]string{"restore", "--from", filepath.Join(dir, "none.db"), "--db", db}, 1, "durabox restore: sqlite: restore from " + filepath.Join(dir, "none.db") + ": sqlite: stat " + filepath.Join(dir, "none.db") + ": no such file or directory"},
	}
	for _, tt := range tests {
		code, _, stderr := durabox(tt.args...)
		if first, _, _ := strings.Cut(stderr, "\n"); code != tt.code || first != tt.want {
			t.Errorf("durabox %s: exit code %d, stderr:\n%s\nwant %d and %s", strings.Join(tt.args, " "), code, stderr, tt.code, tt.want)
		}
	}
}
