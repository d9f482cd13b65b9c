// Package logbuf is a log that a test reads while the code it tests (a
// host on its goroutines) writes it:
//
//	log := &logbuf.Buffer{}
//	h, _ := host.New(st, host.Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
//	…
//	if strings.Contains(log.String(), "level=ERROR") { … }
package logbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that may be written and read at once.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
