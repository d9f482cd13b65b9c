package host

import (
	"fmt"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/internal/size"
	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/store"
)

// attemptScratch is the scratch directory of an activity attempt the host
// runs in wasm: /scratch in its instance, a directory of the host's made
// on the attempt's first use of it and removed when the attempt ends,
// however it ends (end, deferred as soon as the instance is taken).
type attemptScratch struct {
	h *Host
	g *wasmGuest
	w *store.ActivityWork
	s *wasi.Scratch
}

// scratch gives the attempt of w on g its scratch directory, unless the
// host gives none (Options.NoScratch).
func (h *Host) scratch(g *wasmGuest, w *store.ActivityWork) *attemptScratch {
	if h.opts.NoScratch {
		return nil
	}
	s := wasi.NewScratch(h.opts.ScratchDir, int64(h.opts.ScratchLimit))
	g.cfg.env.SetScratch(s)
	return &attemptScratch{h: h, g: g, w: w, s: s}
}

// end takes the scratch directory from the instance, which may run
// another attempt next, and removes it with all it holds.
func (a *attemptScratch) end() {
	if a == nil {
		return
	}
	a.g.cfg.env.SetScratch(nil)
	if err := a.s.Close(); err != nil {
		a.h.opts.Logger.Warn("activity attempt's scratch directory not removed", "instance", a.w.InstanceID, "activity", a.w.Task.Name, "err", err)
	}
}

// explain adds to the failure of an attempt whose scratch directory was
// refused a write for its limit that it was, and which limit: the guest
// saw only "no space left on device".
func (a *attemptScratch) explain(f *engine.Failure) {
	if a == nil || f == nil || !a.s.Full() {
		return
	}
	f.Message += fmt.Sprintf(" (its scratch directory, /scratch, reached the host's limit of %s: durabox serve --scratch-mib)", size.MiB(int(a.h.opts.ScratchLimit)))
}
