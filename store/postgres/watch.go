package postgres

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/store"
)

// Telling other hosts of work (store.Watcher). A commit that makes work
// for any host (a start, a message, a task no host leased, a retry) is
// announced on the channel of the store's database schema with NOTIFY,
// after its commit: an announcer sends one NOTIFY for all the commits
// that came while the one before was sent, so that announcing costs a
// busy store one round trip at a time, and commits wait for none (a
// NOTIFY inside a transaction holds a lock that serializes the commits
// of every such transaction, their WAL flushes included). Each host
// LISTENs on a connection of its own and wakes its fetchers; the
// announcements of its own commits it leaves, since its commits wake its
// fetchers already.

// The kinds of work an announcement names, one a line after the host's
// id: a queue's is its name after queuePrefix.
const (
	announceTurns      = "o"
	announceActivities = "a"
	queuePrefix        = "q:"
)

// reconnectWatch is how long Watch waits before it connects again.
const reconnectWatch = time.Second

// announcer sends the announcements of a store's commits.
type announcer struct {
	mu      sync.Mutex
	pending map[string]bool
	wake    chan struct{}
	once    sync.Once
}

// channel is the channel the store's hosts announce on: one a database
// schema.
func (s *Store) channel() string { return "durabox " + s.where }

// announce announces kinds of work (announceTurns, announceActivities,
// queuePrefix+name) once the commit that made them has committed.
func (s *Store) announce(kinds ...string) {
	if len(kinds) == 0 {
		return
	}
	a := &s.announcer
	a.once.Do(func() {
		a.pending, a.wake = map[string]bool{}, make(chan struct{}, 1)
		go s.announceLoop()
	})
	a.mu.Lock()
	for _, k := range kinds {
		a.pending[k] = true
	}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// announceLoop sends what is pending, one NOTIFY at a time, until the
// store closes.
func (s *Store) announceLoop() {
	a := &s.announcer
	for range a.wake {
		if s.closed.Load() {
			return
		}
		a.mu.Lock()
		kinds := make([]string, 0, len(a.pending))
		for k := range a.pending {
			kinds = append(kinds, k)
		}
		clear(a.pending)
		a.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.ConnectTimeout)
		_, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, s.channel(), s.opts.HostID+"\n"+strings.Join(kinds, "\n"))
		cancel()
		if err != nil && !s.closed.Load() {
			// The hosts that missed it find the work at their next poll.
			s.opts.Logger.Warn("cannot tell the other hosts of new work; they find it at their next poll", "err", err)
		}
	}
}

// Listening reports whether Watch listens.
func (s *Store) Listening() bool { return s.listening.Load() }

// Watch listens for the other hosts' announcements on a connection of
// its own, until ctx ends (store.Watcher).
func (s *Store) Watch(ctx context.Context, wake func(store.Ready)) {
	conn := s.listen(ctx)
	go func() {
		for ctx.Err() == nil {
			if conn == nil {
				select {
				case <-ctx.Done():
					return
				case <-time.After(reconnectWatch):
				}
				if conn = s.listen(ctx); conn != nil {
					// What was announced meanwhile was missed.
					wake(store.Ready{Turns: true, Activities: true})
				}
				continue
			}
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				s.listening.Store(false)
				conn.Close(context.Background())
				conn = nil
				if ctx.Err() == nil {
					s.opts.Logger.Warn("lost the connection that listens for the other hosts' work; polling until it is made again", "err", err)
				}
				continue
			}
			if r, ok := s.ready(n.Payload); ok {
				wake(r)
			}
		}
		if conn != nil {
			s.listening.Store(false)
			conn.Close(context.Background())
		}
	}()
}

// listen connects and LISTENs on the store's channel, or returns nil.
func (s *Store) listen(ctx context.Context) *pgx.Conn {
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = "durabox " + s.opts.HostID + " listen"
	ctx, cancel := context.WithTimeout(ctx, s.opts.ConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		s.opts.Logger.Warn("cannot connect to listen for the other hosts' work; polling meanwhile", "err", err)
		return nil
	}
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{s.channel()}.Sanitize()); err != nil {
		s.opts.Logger.Warn("cannot listen for the other hosts' work; polling meanwhile", "err", err)
		conn.Close(context.Background())
		return nil
	}
	s.listening.Store(true)
	return conn
}

// ready reads an announcement; it reports false for one of this host's
// own.
func (s *Store) ready(payload string) (store.Ready, bool) {
	lines := strings.Split(payload, "\n")
	if lines[0] == s.opts.HostID {
		return store.Ready{}, false
	}
	var r store.Ready
	for _, k := range lines[1:] {
		switch {
		case k == announceTurns:
			r.Turns = true
		case k == announceActivities:
			r.Activities = true
		case strings.HasPrefix(k, queuePrefix):
			r.Queues = append(r.Queues, strings.TrimPrefix(k, queuePrefix))
		}
	}
	return r, true
}

var _ store.Watcher = (*Store)(nil)

// stop ends the announcer, if it runs, as the store closes.
func (a *announcer) stop() {
	a.once.Do(func() {})
	if a.wake != nil {
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}
}

// turnAnnounces is what the commit c announces, having leased leased of
// its tasks to its host, of an instance that has a parent or not.
func turnAnnounces(c store.TurnCommit, leased int, parent bool) []string {
	var kinds []string
	if len(c.Children) > 0 || len(c.Outgoing) > 0 || len(c.Raises) > 0 || parent && c.Status.IsTerminal() {
		kinds = append(kinds, announceTurns)
	}
	own := 0
	for _, a := range c.Activities {
		if a.Queue == "" {
			own++
		} else {
			kinds = append(kinds, queuePrefix+a.Queue)
		}
	}
	if own > leased {
		kinds = append(kinds, announceActivities)
	}
	return kinds
}

// taskAnnounce is what a change of the task w announces.
func taskAnnounce(w *store.ActivityWork) string {
	if w.Task.Queue != "" {
		return queuePrefix + w.Task.Queue
	}
	return announceActivities
}
