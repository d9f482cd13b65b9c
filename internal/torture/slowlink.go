package torture

import (
	"net"
	"sync/atomic"
	"time"
)

// slowLink is a TCP proxy between a host and its database that delays
// what crosses it, each way, by a latency a run sets and clears (the
// kernel here has no netem to delay a link with): what it reads it writes
// on once that long has passed since it read it, in order.
type slowLink struct {
	ln      net.Listener
	target  string
	latency atomic.Int64 // nanoseconds
}

// newSlowLink listens on addr (a port of 0 picks one) and forwards each
// connection to target.
func newSlowLink(addr, target string) (*slowLink, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	l := &slowLink{ln: ln, target: target}
	go l.serve()
	return l, nil
}

// Addr is where the link listens.
func (l *slowLink) Addr() string { return l.ln.Addr().String() }

// setLatency delays what crosses the link from now on by d each way.
func (l *slowLink) setLatency(d time.Duration) { l.latency.Store(int64(d)) }

func (l *slowLink) serve() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			t, err := net.Dial("tcp", l.target)
			if err != nil {
				return
			}
			defer t.Close()
			done := make(chan struct{}, 2)
			go func() { l.pipe(t, c); done <- struct{}{} }()
			go func() { l.pipe(c, t); done <- struct{}{} }()
			<-done // one side closed: close both
		}()
	}
}

// chunk is what pipe read, and when.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies from src to dst, each chunk held until the latency has
// passed since it was read.
func (l *slowLink) pipe(dst, src net.Conn) {
	chunks := make(chan chunk, 1024)
	go func() {
		defer close(chunks)
		for {
			b := make([]byte, 32<<10)
			n, err := src.Read(b)
			if n > 0 {
				chunks <- chunk{b[:n], time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range chunks {
		time.Sleep(time.Until(c.at.Add(time.Duration(l.latency.Load()))))
		if _, err := dst.Write(c.b); err != nil {
			return
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

// close stops listening; the connections it forwards end with the
// hosts and the database.
func (l *slowLink) close() { l.ln.Close() }
