package sqlite

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// fill creates n instances and commits the first turn of each, with a
// payload of 2 KB in each event, so that the history spans many pages.
func fill(t *testing.T, s *Store, n int) {
	t.Helper()
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("w1"), Orchestrations: []string{"Greeting"}, DeployedAt: t0}); err != nil {
		t.Fatal(err)
	}
	big := json.RawMessage(`"` + strings.Repeat("x", 2000) + `"`)
	for i := range n {
		id := fmt.Sprintf("i%03d", i)
		create(t, s, id)
		item := lock(t, s, t0)
		started := event(1, engine.OrchestrationStarted)
		started.Name, started.InstanceID, started.Input = "Greeting", id, big
		scheduled := event(2, engine.ActivityScheduled)
		scheduled.Name, scheduled.Input = "SayHello", big
		commit(t, s, store.TurnCommit{
			InstanceID: item.Instance.ID, ExecutionID: 1, LockToken: item.LockToken, Now: t0,
			NewEvents:  []engine.Event{started, scheduled},
			Activities: []engine.ActivityTask{{ScheduleID: 2, Name: "SayHello", Input: big}},
			Status:     engine.StatusRunning,
			Consumed:   []int64{item.Messages[0].ID},
		})
	}
}

// crashCopy copies the database and its WAL as they are while s holds
// them, as a host that died now would leave them, and returns the copy's
// path.
func crashCopy(t *testing.T, path string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dst+suffix, b)
	}
	return dst
}

// filledCopy fills a store with n instances, and returns a copy of its
// file and WAL as a host that died would leave them or, with closed, as
// the store leaves them when it closes.
func filledCopy(t *testing.T, n int, closed bool) string {
	s, path := openTest(t)
	fill(t, s, n)
	if !closed {
		return crashCopy(t, path)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy.db")
	writeFile(t, dst, files(t, path)[""])
	return dst
}

// rootPage returns the first page of table's b-tree.
func rootPage(t *testing.T, path, table string) int64 {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var page int64
	if err := db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = ?`, table).Scan(&page); err != nil {
		t.Fatal(err)
	}
	return page
}

// overwrite writes b at off in the file.
func overwrite(t *testing.T, name string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func truncate(t *testing.T, name string, size int64) {
	t.Helper()
	if err := os.Truncate(name, size); err != nil {
		t.Fatal(err)
	}
}

func size(t *testing.T, name string) int64 {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// garbage is n random bytes.
func garbage(n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{7}).Read(b)
	return b
}

// TestRefusesDamagedFiles: Open refuses a database made by the store and
// then damaged (garbage in its pages, cut short, its WAL cut short or
// damaged), says what is wrong and what to do, and leaves the files as
// they were; Check finds the same damage.
func TestRefusesDamagedFiles(t *testing.T) {
	t.Parallel()
	const frame = walFrameHeaderSize + 4096
	tests := []struct {
		name   string
		damage func(t *testing.T) string // returns the damaged file's path
		want   string                    // in Open's error, after "sqlite: PATH is damaged: "
	}{
		{"garbage in the pages of history", func(t *testing.T) string {
			path := filledCopy(t, 60, true)
			page := rootPage(t, path, "history")
			overwrite(t, path, (page-1)*4096, garbage(2*4096))
			return path
		}, "SQLite's quick_check found "},
		{"the file cut short", func(t *testing.T) string {
			path := filledCopy(t, 60, true)
			truncate(t, path, size(t, path)/2)
			return path
		}, "the file is "},
		{"its WAL cut in the middle of a frame", func(t *testing.T) string {
			path := filledCopy(t, 20, false)
			wal := path + "-wal"
			if (size(t, wal)-walHeaderSize)%frame != 0 {
				t.Fatalf("the WAL is %d bytes, not whole frames", size(t, wal))
			}
			truncate(t, wal, size(t, wal)-frame/2)
			return path
		}, "its WAL ("},
		{"a frame of its WAL damaged", func(t *testing.T) string {
			path := filledCopy(t, 20, false)
			overwrite(t, path+"-wal", walHeaderSize+walFrameHeaderSize+1000, garbage(16))
			return path
		}, "its WAL ("},
		{"its WAL's header damaged", func(t *testing.T) string {
			path := filledCopy(t, 20, false)
			overwrite(t, path+"-wal", 16, garbage(4))
			return path
		}, "its WAL ("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.damage(t)
			before := files(t, path)
			_, err := Open(path, Options{})
			want := "sqlite: " + path + " is damaged: " + tt.want
			if err == nil || !strings.HasPrefix(err.Error(), want) ||
				!strings.HasSuffix(err.Error(), "run durabox check-db --db "+path+" for everything wrong with it, and restore it from a backup (durabox restore; see docs/operator.md)") {
				t.Fatalf("Open: %v\nwant %s…", err, want)
			}
			if after := files(t, path); !sameFiles(before, after) {
				t.Fatal("the refused files were modified")
			}
			c, err := Check(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Problems) == 0 {
				t.Fatalf("Check found no problem; it ran %q", c.Ran)
			}
			if first := c.Problems[0]; !strings.Contains(err2text(t, path), first) && !strings.HasPrefix(tt.want, "SQLite's") {
				t.Fatalf("Check's first problem %q is not in Open's error", first)
			}
			if after := files(t, path); !sameFiles(before, after) {
				t.Fatal("Check modified the files")
			}
			// Where the error says to which size the WAL may be cut to
			// keep the commits before the damage, the database opens once
			// it is.
			if m := keepBefore.FindStringSubmatch(err2text(t, path)); m != nil {
				n, _ := strconv.ParseInt(m[2], 10, 64)
				truncate(t, m[1], n)
				openAt(t, path, Options{})
			}
		})
	}
}

// keepBefore finds the advice to truncate a damaged WAL.
var keepBefore = regexp.MustCompile(`truncate (\S+) to (\d+) bytes`)

// err2text is Open's error on path.
func err2text(t *testing.T, path string) string {
	_, err := Open(path, Options{})
	if err == nil {
		t.Fatal("Open did not refuse it")
	}
	return err.Error()
}

// files returns the bytes of the database and its WAL, when they are
// not empty.
func files(t *testing.T, path string) map[string][]byte {
	out := map[string][]byte{}
	for _, suffix := range []string{"", "-wal"} {
		if b, err := os.ReadFile(path + suffix); err == nil && len(b) > 0 {
			out[suffix] = b
		}
	}
	return out
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestOpensWhatACrashLeaves: the database and WAL a host leaves when it
// dies, and the same WAL with an unfinished transaction at its end or
// frames of an earlier run after its own, are not damage: Open opens
// them, with every commit.
func TestOpensWhatACrashLeaves(t *testing.T) {
	t.Parallel()
	s, path := openTest(t)
	fill(t, s, 20)
	copied := crashCopy(t, path)
	// An unfinished transaction: a frame with no commit, of the WAL's run.
	wal := files(t, copied)["-wal"]
	hdr := wal[:walHeaderSize]
	unfinished := slices.Concat(wal, make([]byte, walFrameHeaderSize+4096))
	copy(unfinished[len(wal)+8:], hdr[16:24])
	// Frames of an earlier run: other salts, cut where SQLite limits the
	// file.
	earlier := slices.Concat(wal, garbage(walFrameHeaderSize+4096+544))
	for name, w := range map[string][]byte{"as left": wal, "an unfinished transaction": unfinished, "an earlier run's frames": earlier} {
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "copy.db")
			writeFile(t, dst, files(t, copied)[""])
			writeFile(t, dst+"-wal", w)
			c, err := Check(ctx, dst)
			if err != nil || len(c.Problems) > 0 {
				t.Fatalf("Check: %v, %q", err, c.Problems)
			}
			got := openAt(t, dst, Options{})
			if n := count(t, got, "instances"); n != 20 {
				t.Fatalf("%d instances; want 20", n)
			}
		})
	}
}

// TestCheck: Check finds nothing in a database the store wrote, and each
// broken invariant, in words, in one edited by hand.
func TestCheck(t *testing.T) {
	t.Parallel()
	s, path := openTest(t)
	fill(t, s, 3)
	c, err := Check(ctx, path)
	if err != nil || len(c.Problems) > 0 {
		t.Fatalf("Check of a database in use: %v, %q", err, c.Problems)
	}
	if want := fmt.Sprintf("the file is in use by a host (pid %d): its WAL, which the host is writing, was not read apart from what SQLite reads", os.Getpid()); c.Ran[0] != want {
		t.Fatalf("Check ran %q\nwant first %q", c.Ran, want)
	}
	for _, edit := range []string{
		`DELETE FROM history WHERE instance_id = 'i000' AND event_id = 1`,
		`UPDATE history SET payload = json_set(payload, '$.scheduleId', 9, '$.kind', 'ActivityCompleted') WHERE instance_id = 'i001' AND event_id = 2`,
		`INSERT INTO messages (instance_id, payload, visible_at) VALUES ('gone', '{"kind":"ExternalEvent"}', 0)`,
		`INSERT INTO messages (instance_id, payload, visible_at) VALUES ('i002', '{"kind":', 0)`,
		`UPDATE instances SET last_event_id = 5 WHERE id = 'i002'`,
		`INSERT INTO history (instance_id, execution_id, event_id, payload) SELECT instance_id, 2, 1, payload FROM history WHERE instance_id = 'i002' AND event_id = 2`,
	} {
		exec(t, s, edit)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c, err = Check(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`messages: 1 rows for instance "gone", which does not exist`,
		`instance "i002" execution 1: its last event is 5, but its history's last is 2`,
		`instance "i000" execution 1: its first event has id 2, not 1`,
		`instance "i001" execution 1: event 2, ActivityCompleted, names event 9, which is no ActivityScheduled before it`,
		`instance "i002" execution 2: the row of event 1 holds event 2`,
		`message 5 for instance "i002" does not decode: unexpected end of JSON input`,
	}
	if !slices.Equal(c.Problems, want) {
		t.Errorf("Check found\n%s\nwant\n%s", strings.Join(c.Problems, "\n"), strings.Join(want, "\n"))
	}
	ran := []string{
		"the file's header and its WAL (0 frames to apply)", fmt.Sprintf("the schema's version, %d", schemaVersion), "SQLite's integrity_check", "SQLite's foreign_key_check",
		"the store's invariants (instances 3, executions 4, events 6, messages 2)",
	}
	if !slices.Equal(c.Ran, ran) {
		t.Errorf("Check ran %q\nwant %q", c.Ran, ran)
	}
}

// TestOpenCheckHeader: with OpenCheckHeader, Open does not read the pages,
// and the damage in them is an error of the read that meets it, never data.
func TestOpenCheckHeader(t *testing.T) {
	t.Parallel()
	path := filledCopy(t, 60, true)
	overwrite(t, path, (rootPage(t, path, "history")-1)*4096, garbage(2*4096))
	s, err := Open(path, Options{OpenCheck: OpenCheckHeader})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.History(ctx, "i000", 0); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("History on a damaged page: %v; want SQLite's malformed error", err)
	}
}
