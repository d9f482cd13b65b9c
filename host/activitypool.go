package host

import (
	"context"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/wasi"
)

// activityPool keeps idle activity instances per module for reuse. Activity
// instances run with the real clock and real randomness.
//
// The last instance put back is the first taken, so that a steady load
// runs on as few instances as it needs; and an instance left idle for
// activityIdle is closed, so that those a burst made do not stay for good.
// An instance's memory grows as its Go runtime's heap does, to some 8 MiB
// for a small activity, and never shrinks: a pool that kept every instance
// a burst of activities ever needed kept the host's memory growing for as
// long as it ran.
type activityPool struct {
	h    *Host
	mu   sync.Mutex
	idle map[string][]idleGuest
}

// idleGuest is an instance in the pool, idle since it was put back.
type idleGuest struct {
	g     *wasmGuest
	since time.Time
}

// activityIdle is how long an activity instance stays in the pool unused
// before it is closed.
const activityIdle = time.Minute

func newActivityPool(h *Host) *activityPool {
	return &activityPool{h: h, idle: map[string][]idleGuest{}}
}

// get returns an instance of the module for an attempt, whose output is
// logged tagged with the attempt's tags.
func (p *activityPool) get(ctx context.Context, hash string, tags ...any) (*wasmGuest, error) {
	mod, err := p.h.reg.module(ctx, hash)
	if err != nil {
		return nil, err
	}
	environ := p.h.reg.environ(mod)
	if g := p.take(ctx, hash, environ); g != nil {
		g.cfg.log.tag(tags...)
		return g, nil
	}
	log := newGuestLog(p.h.opts.Logger, p.h.opts.Clock, "module", api.Short(hash))
	log.tag(tags...)
	stderr := newCrashLog()
	env := wasi.NewReal(environ, log, io.MultiWriter(log, stderr))
	env.AllowHTTP(p.h.opts.HTTPAllowList)
	if !p.h.opts.NoScratch {
		env.OfferScratch()
	}
	g, err := newGuest(ctx, mod, guestConfig{env: env, timeout: p.h.opts.ActivityTimeout, stderr: stderr, log: log, memoryLimit: p.h.opts.MemoryLimit, activity: true})
	if err == nil {
		p.h.metrics.SandboxStarted("activity")
	}
	return g, err
}

// take returns an idle instance of the module made with environ, or nil.
// It closes the idle instances made with an environment that a later deploy
// of the module replaced: a guest reads its environment once, at start.
func (p *activityPool) take(ctx context.Context, hash string, environ []string) *wasmGuest {
	var stale []*wasmGuest
	defer func() { closeAll(ctx, stale) }()
	p.mu.Lock()
	defer p.mu.Unlock()
	for gs := p.idle[hash]; len(gs) > 0; gs = p.idle[hash] {
		g := gs[len(gs)-1].g
		p.idle[hash] = gs[:len(gs)-1]
		if slices.Equal(g.cfg.env.Environ(), environ) {
			return g
		}
		stale = append(stale, g)
	}
	return nil
}

// put returns a healthy instance to the pool, or closes it when the pool
// already holds one per activity worker; and it closes the module's
// instances idle for activityIdle.
func (p *activityPool) put(ctx context.Context, hash string, g *wasmGuest) {
	now := p.h.opts.Clock()
	var closing []*wasmGuest
	defer func() { closeAll(ctx, closing) }()
	p.mu.Lock()
	defer p.mu.Unlock()
	gs := p.idle[hash]
	for len(gs) > 0 && now.Sub(gs[0].since) >= activityIdle {
		closing = append(closing, gs[0].g)
		gs = gs[1:]
	}
	if len(gs) < p.h.opts.ActivityWorkers {
		gs = append(gs, idleGuest{g, now})
	} else {
		closing = append(closing, g)
	}
	p.idle[hash] = gs
}

func (p *activityPool) close(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, gs := range p.idle {
		for _, ig := range gs {
			ig.g.close(ctx)
		}
	}
	p.idle = map[string][]idleGuest{}
}

// closeAll closes gs.
func closeAll(ctx context.Context, gs []*wasmGuest) {
	for _, g := range gs {
		g.close(ctx)
	}
}
