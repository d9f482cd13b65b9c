package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/storetest"
)

// TestWritesShareCommits starts many instances at once, a tenth of them
// twice: the writes go to disk in fewer transactions than there are
// writes, and a write that fails in a shared transaction fails alone.
func TestWritesShareCommits(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w"), Orchestrations: []string{"O"}}); err != nil {
		t.Fatal(err)
	}
	const instances, workers = 400, 40
	before := s.batches.Load()
	var wg sync.WaitGroup
	errs := make([]error, instances+instances/10)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(errs); i += workers {
				errs[i] = s.CreateInstance(ctx, store.NewInstance{ID: fmt.Sprint(i % instances), Name: "O", ModuleHash: "h1", Now: t0})
			}
		})
	}
	wg.Wait()
	created, taken := 0, 0
	for i, err := range errs {
		switch {
		case err == nil:
			created++
		case errors.Is(err, store.ErrInstanceExists):
			taken++
		default:
			t.Fatalf("create %d: %v", i, err)
		}
	}
	if created != instances || taken != instances/10 {
		t.Fatalf("%d created and %d refused as taken, want %d and %d", created, taken, instances, instances/10)
	}
	if n := count(t, s, "instances"); n != instances {
		t.Fatalf("%d instances stored, want %d", n, instances)
	}
	if n := count(t, s, "messages"); n != instances {
		t.Fatalf("%d start messages stored, want %d (a refused write left something behind?)", n, instances)
	}
	if batches := s.batches.Load() - before; batches > int64(len(errs))/2 {
		t.Fatalf("%d writes took %d transactions; group commit should share them", len(errs), batches)
	}
}

// TestWriteAfterClose is refused with an error that says so.
func TestWriteAfterClose(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir()+"/closed.db", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	err = s.Enqueue(ctx, "i1", engine.Event{Kind: engine.ExternalEvent, Name: "E"}, t0, nil)
	if !errors.Is(err, errClosed) {
		t.Fatalf("enqueue after close: %v, want %v", err, errClosed)
	}
}

// TestLeaseWritesDoNotWaitForSync commits a batch of lease writes (the
// count of a delivery not counted in advance) alone without a sync
// (activity results too, the same way), and syncs every other batch as the
// store's durability says.
func TestLeaseWritesDoNotWaitForSync(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	withInstance(t, s)
	synchronous := func() string {
		t.Helper()
		var mode int
		// The writer owns the connection: ask through a write.
		if err := s.write(ctx, func(ctx context.Context, tx txConn) error {
			return tx.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&mode)
		}); err != nil {
			t.Fatal(err)
		}
		return map[int]string{1: "NORMAL", 2: "FULL"}[mode]
	}
	firstTurn(t, s)
	if s.syncMode != "FULL" {
		t.Fatalf("a turn committed with synchronous=%s, want FULL", s.syncMode)
	}
	writes := s.batches.Load()
	leaseActivity(t, s, t0, time.Minute)
	if n := s.batches.Load() - writes; n != 0 {
		t.Fatalf("a lease of a task whose delivery was counted in advance took %d transactions, want none", n)
	}
	if err := s.ReleaseAllLeases(ctx); err != nil {
		t.Fatal(err)
	}
	w := leaseActivity(t, s, t0, time.Minute) // counts the delivery
	if s.syncMode != "NORMAL" {
		t.Fatalf("a delivery's count committed with synchronous=%s, want NORMAL", s.syncMode)
	}
	if got := synchronous(); got != "FULL" {
		t.Fatalf("a durable write ran with synchronous=%s, want FULL", got)
	}
	synchronous()
	// A result too large to keep for the next turn (results.go) is
	// written at once, without a sync.
	large := json.RawMessage(`"` + strings.Repeat("x", pendingResultMax) + `"`)
	if err := s.CompleteActivity(ctx, w, engine.Event{Kind: engine.ActivityCompleted, ScheduleID: 2, Result: large}, t0); err != nil {
		t.Fatal(err)
	}
	if s.syncMode != "NORMAL" {
		t.Fatalf("an activity result committed with synchronous=%s, want NORMAL", s.syncMode)
	}
}

// TestOnCommit: the observer is told of every transaction, with the
// writes it held; between them they hold every write.
func TestOnCommit(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		commits []store.CommitStats
	)
	s := openAt(t, t.TempDir()+"/observed.db", Options{OnCommit: func(c store.CommitStats) {
		mu.Lock()
		defer mu.Unlock()
		commits = append(commits, c)
	}})
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w"), Orchestrations: []string{"O"}}); err != nil {
		t.Fatal(err)
	}
	const writes = 200
	var wg sync.WaitGroup
	for i := range writes {
		wg.Go(func() {
			if err := s.CreateInstance(ctx, store.NewInstance{ID: fmt.Sprint(i), Name: "O", ModuleHash: "h1", Now: t0}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, c := range commits {
		if c.Writes < 1 || c.Duration <= 0 || c.Err != nil {
			t.Errorf("commit %+v; want at least one write, a duration and no error", c)
		}
		total += c.Writes
	}
	if total != writes+1 {
		t.Errorf("the commits hold %d writes, want %d (the module and the instances)", total, writes+1)
	}
	if int64(len(commits)) != s.batches.Load() {
		t.Errorf("the observer saw %d commits; the store made %d", len(commits), s.batches.Load())
	}
}

// TestQueuedWrites holds a batch under way and queues writes behind it:
// one whose context ends while it waits never runs, the others commit
// together once the batch is done, committed by one of their callers, and
// a Close meanwhile waits for them and refuses what comes after it.
func TestQueuedWrites(t *testing.T) {
	t.Parallel()
	s, path := openTest(t)
	if err := s.PutModule(ctx, store.Module{Hash: "h", Wasm: []byte("w")}); err != nil {
		t.Fatal(err)
	}
	release := holdWriter(s)
	insert := func(name string) writeFunc {
		return func(ctx context.Context, tx txConn) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO orchestration_modules (name, hash) VALUES (?, 'h')`, name)
			return err
		}
	}
	// The first queued write gives up; the queue goes on without it.
	cancelCtx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		gaveUp <- s.write(cancelCtx, func(context.Context, txConn) error {
			t.Error("a write whose context ended in the queue ran")
			return nil
		})
	}()
	waitQueued(s, 1)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = s.write(ctx, insert(fmt.Sprint("O", i))) })
	}
	waitQueued(s, 1+len(errs))
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("the write that gave up in the queue returned %v, want %v", err, context.Canceled)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for {
		s.writers.mu.Lock()
		c := s.writers.closed
		s.writers.mu.Unlock()
		if c {
			break
		}
		runtime.Gosched()
	}
	if err := s.write(ctx, insert("late")); !errors.Is(err, errClosed) {
		t.Fatalf("a write after Close began returned %v, want %v", err, errClosed)
	}
	batches := s.batches.Load()
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("queued write %d: %v", i, err)
		}
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	var n int64
	if n = s.batches.Load() - batches; n != 2 {
		t.Fatalf("the held batch and the queue behind it took %d transactions, want 2", n)
	}
	reopened := openAt(t, path, Options{})
	if err := reopened.readers.QueryRowContext(ctx, `SELECT count(*) FROM orchestration_modules`).Scan(&n); err != nil || n != int64(len(errs)) {
		t.Fatalf("%d of the %d queued writes are in the file (%v)", n, len(errs), err)
	}
}

// TestAuditCommitsUnsynced: an audit record adds no sync to the path of
// the change it records.
func TestAuditCommitsUnsynced(t *testing.T) {
	t.Parallel()
	var o storetest.Observed
	s := openAt(t, t.TempDir()+"/audit.db", Options{OnCommit: o.OnCommit})
	storetest.CommitsOfAudit(t, s, &o)
}
