package torture

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// hostProc is one durabox serve process. Its output goes to the run's log
// file, which outlives every kill.
type hostProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// startHost starts durabox serve with args and waits until it serves.
func startHost(bin string, args []string, log io.Writer) (*hostProc, error) {
	return startProc(bin, append([]string{"serve"}, args...), log, serveReady)
}

// serveReady begins the line durabox serve prints once it serves.
const serveReady = "durabox: serving on "

// startProc starts bin with args and waits until it prints a line that
// begins with ready.
func startProc(bin string, args []string, log io.Writer, ready string) (*hostProc, error) {
	cmd := exec.Command(bin, args...)
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start durabox serve: %w", err)
	}
	p := &hostProc{cmd: cmd, exited: make(chan struct{})}
	serving := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(log, line)
			if strings.HasPrefix(line, ready) {
				close(serving)
			}
		}
		io.Copy(log, out) // a line too long for the scanner
		cmd.Wait()
		close(p.exited)
	}()
	select {
	case <-serving:
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("%s exited before it was ready, with %v (its output is in the run's log)", strings.Join(cmd.Args, " "), cmd.ProcessState)
	case <-time.After(time.Minute):
		p.kill()
		return nil, fmt.Errorf("%s was not ready within a minute", strings.Join(cmd.Args, " "))
	}
}

// kill kills the process with SIGKILL and waits until it is gone.
func (p *hostProc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// stop asks the process to stop, as an operator would, and waits.
func (p *hostProc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.kill()
	}
}
