package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store/sqlite"
)

// restart measures, with the real durabox binary, the time from starting
// durabox serve on an existing database with an instance waiting to the
// commit of that instance's first turn: with the compile cache, and
// without it.
func restart(c *config, _ float64) error {
	bin := filepath.Join(c.dir, "durabox")
	build := exec.Command("go", "build", "-o", bin, "./cmd/durabox")
	build.Dir = guestbuild.Root()
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build durabox: %v\n%s", err, out)
	}
	db := filepath.Join(c.dir, c.runtime+"-restart.db")
	for _, cached := range []bool{true, false} {
		id := fmt.Sprint("restart-", cached)
		if err := prepareRestart(c, db, id); err != nil {
			return err
		}
		if !cached {
			if err := os.RemoveAll(db + ".wasmcache"); err != nil {
				return err
			}
		}
		d, err := timeFirstTurn(bin, c.runtime, db, id)
		if err != nil {
			return err
		}
		if cached {
			report("restart_to_first_turn", ms(d), "ms")
		} else {
			report("restart_to_first_turn_uncached", ms(d), "ms")
		}
	}
	return nil
}

// prepareRestart leaves db with the hello module deployed and compiled into
// its cache, and instance id started but not yet run.
func prepareRestart(c *config, db, id string) error {
	st, err := sqlite.Open(db, sqlite.Options{Durability: c.durability})
	if err != nil {
		return err
	}
	defer st.Close()
	h, err := host.New(st, host.Options{Runtime: c.runtime, CacheDir: db + ".wasmcache"})
	if err != nil {
		return err
	}
	defer h.Close()
	ctx := context.Background()
	if _, err := h.Deploy(ctx, c.helloModule); err != nil {
		return err
	}
	_, err = h.Start(ctx, "Greeting", []byte(`"world"`), id)
	return err
}

// timeFirstTurn starts durabox serve on db and returns how long it took
// until instance id left Pending, watching the file through a read-only
// connection of its own.
func timeFirstTurn(bin, runtime, db, id string) (time.Duration, error) {
	watch, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer watch.Close()
	start := time.Now()
	serve := exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0", "--runtime", runtime)
	if err := serve.Start(); err != nil {
		return 0, err
	}
	defer func() {
		serve.Process.Kill()
		serve.Wait()
	}()
	for time.Since(start) < time.Minute {
		var status string
		if err := watch.QueryRow(`SELECT status FROM instances WHERE id = ?`, id).Scan(&status); err != nil {
			return 0, err
		}
		if status != "Pending" {
			return time.Since(start), nil
		}
		time.Sleep(500 * time.Microsecond)
	}
	return 0, fmt.Errorf("instance %s was still pending a minute after durabox serve started", id)
}
