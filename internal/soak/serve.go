package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// serveProc is the durabox serve process under load; its output goes to
// log, a file the sampler measures.
type serveProc struct {
	cmd    *exec.Cmd
	addr   string
	db     string
	log    string
	exited chan struct{}
}

// startServe starts durabox serve on a new database in dir, with c's
// retention and runtime, and waits until it serves.
func startServe(c *config, dir string) (*serveProc, error) {
	p := &serveProc{db: filepath.Join(dir, "soak.db"), log: filepath.Join(dir, "serve.log"), exited: make(chan struct{})}
	logFile, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(c.bin, "serve", "--db", p.db, "--addr", "127.0.0.1:0", "--runtime", c.runtime,
		"--retention", c.retention.String(), "--sweep-interval", c.sweepInterval.String())
	out, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p.cmd.Stdout = p.cmd.Stderr
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start durabox serve: %w", err)
	}
	serving := make(chan string, 1)
	go func() {
		defer close(p.exited)
		defer logFile.Close()
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logFile, line)
			if rest, ok := strings.CutPrefix(line, "durabox: serving on http://"); ok {
				serving <- strings.Fields(rest)[0]
			}
		}
		io.Copy(logFile, out) // a line too long for the scanner
		p.cmd.Wait()
	}()
	select {
	case p.addr = <-serving:
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("durabox serve exited before serving, with %v (its output is in %s)", p.cmd.ProcessState, p.log)
	case <-time.After(time.Minute):
		p.stop()
		return nil, fmt.Errorf("durabox serve did not serve within a minute")
	}
}

// pid is the process's id.
func (p *serveProc) pid() int { return p.cmd.Process.Pid }

// stop asks the process to stop, as an operator would, waits, and returns
// how it exited.
func (p *serveProc) stop() *os.ProcessState {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	}
	return p.cmd.ProcessState
}
