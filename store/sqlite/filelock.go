package sqlite

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockFile takes the lock that gives one host a database file: an
// exclusive flock on path+".lock", a file that holds the holder's pid so
// that the next one can say who has it.
func lockFile(path string) (*os.File, error) {
	name := path + ".lock"
	for {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("sqlite: lock %s: %w", path, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder := holderPID(f)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &InUseError{Path: path, PID: holder}
			}
			return nil, fmt.Errorf("sqlite: lock %s: %w", path, err)
		}
		// A holder removes the file before it lets go (see unlockFile). If
		// that happened between our open and our lock, we hold a file that
		// is no longer there, and someone may lock the new one: start
		// again.
		if here, err := os.Stat(name); err != nil || !sameFile(f, here) {
			f.Close()
			continue
		}
		if err := writePID(f); err != nil {
			unlockFile(f)
			return nil, fmt.Errorf("sqlite: lock %s: %w", path, err)
		}
		return f, nil
	}
}

// InUseError is returned when another Store, in this process or
// another, holds the database file.
type InUseError struct {
	// Path is the database file; PID the holder's process id, or
	// "unknown".
	Path, PID string
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("sqlite: %s is in use by another durabox process (pid %s); stop it first or use another --db file", e.Path, e.PID)
}

// unlockFile removes the lock file, then lets go of the lock; in that
// order, whoever locks the file next finds it removed and starts again.
func unlockFile(f *os.File) error {
	return errors.Join(os.Remove(f.Name()), f.Close())
}

func sameFile(f *os.File, fi os.FileInfo) bool {
	mine, err := f.Stat()
	return err == nil && os.SameFile(mine, fi)
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// holderWait bounds how long holderPID waits for the holder's pid.
const holderWait = 2 * time.Second

// holderPID reads the pid the holder wrote, or says it is unknown. The
// holder writes it just after it takes the lock, so a file found locked
// may not hold it yet: it reads again until it does, for holderWait at
// most.
func holderPID(f *os.File) string {
	deadline := time.Now().Add(holderWait)
	buf := make([]byte, 32)
	for {
		n, _ := f.ReadAt(buf, 0)
		pid := strings.TrimSpace(string(buf[:n]))
		if _, err := strconv.Atoi(pid); err == nil {
			return pid
		}
		if time.Now().After(deadline) {
			return "unknown"
		}
		time.Sleep(5 * time.Millisecond)
	}
}
