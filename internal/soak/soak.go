package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/internal/guestbuild"
)

// modules are the examples the load runs.
var modules = []string{"examples/wasm/hello", "examples/wasm/approval", "examples/wasm/eternal"}

// soak runs the load on a new host for c.minutes, sampling it every
// c.every, and stops the host.
func soak(c *config) (*report, error) {
	dir, err := os.MkdirTemp("", "durabox-soak-")
	if err != nil {
		return nil, err
	}
	if c.keep {
		fmt.Printf("# the database and the host's log are kept in %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	var wasm [][]byte
	for _, m := range modules {
		b, err := guestbuild.Wasm(m)
		if err != nil {
			return nil, err
		}
		wasm = append(wasm, b)
	}
	p, err := startServe(c, dir)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	cl := client.New("http://"+p.addr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(c.minutes*float64(time.Minute)))
	defer cancel()
	for _, b := range wasm {
		if _, err := cl.Deploy(ctx, b); err != nil {
			return nil, err
		}
	}
	r := &report{c: c, began: time.Now()}
	l, err := startLoad(ctx, cl, c)
	if err != nil {
		return nil, err
	}
	err = r.sampleUntil(ctx, p)
	cancel()
	l.wait()
	r.load = l
	if err != nil {
		return nil, err
	}
	r.exit = p.stop()
	log, err := os.ReadFile(p.log)
	if err != nil {
		return nil, err
	}
	r.logErrors = bytes.Count(log, []byte("level=ERROR"))
	return r, nil
}

// sampleUntil samples p every c.every until ctx is done.
func (r *report) sampleUntil(ctx context.Context, p *serveProc) error {
	t := time.NewTicker(r.c.every)
	defer t.Stop()
	for {
		s, err := take(p, time.Since(r.began))
		if err != nil {
			return fmt.Errorf("sample the host: %w", err)
		}
		r.samples = append(r.samples, s)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
