package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/durabox/durabox/host/client"
)

// server is one durabox serve process on the test's database. Its output
// goes to the run's log file, which outlives every kill.
type server struct {
	cmd    *exec.Cmd
	client *client.Client
	exited chan struct{}
}

var servingLine = regexp.MustCompile(`durabox: serving on http://(\S+)`)

// startServer starts durabox serve on db and waits until it serves.
func startServer(bin, db string, log io.Writer) (*server, error) {
	cmd := exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0")
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, exited: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(log, line)
			if m := servingLine.FindStringSubmatch(line); m != nil {
				addr <- m[1]
			}
		}
		io.Copy(log, out)
		cmd.Wait()
		close(s.exited)
	}()
	select {
	case a := <-addr:
		s.client = client.New("http://"+a, nil)
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("durabox serve exited before serving (its output is in the run's log)")
	case <-time.After(time.Minute):
		s.kill()
		return nil, fmt.Errorf("durabox serve did not serve within a minute")
	}
}

// kill kills the process with SIGKILL and waits for it to be gone.
func (s *server) kill() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// stop asks the process to stop, as an operator would, and waits.
func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.kill()
	}
}

// redeliveries counts, in the log of every run, the activities the host
// delivered more than once: those an earlier delivery of which a kill cut
// short.
func redeliveries(logPath string) (int, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	again := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "activity delivered again") {
			continue
		}
		var key []string
		for _, field := range strings.Fields(line) {
			if strings.HasPrefix(field, "instance=") || strings.HasPrefix(field, "scheduleId=") {
				key = append(key, field)
			}
		}
		again[strings.Join(key, " ")] = true
	}
	return len(again), sc.Err()
}
