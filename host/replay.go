package host

import (
	"context"
	"fmt"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Replay replays an instance's history on a fresh wasm instance of the
// module it runs on, and returns nil if the orchestration reproduces it
// exactly, or the error that says where it diverges (a
// *engine.NondeterminismError, or the guest's crash). Nothing is written.
func (h *Host) Replay(ctx context.Context, id string) error {
	inst, err := h.Instance(ctx, id)
	if err != nil {
		return err
	}
	return h.replay(ctx, inst)
}

// replay replays the history of inst's current execution on a fresh wasm
// instance of module inst.ModuleHash, as Replay does.
func (h *Host) replay(ctx context.Context, inst store.Instance) error {
	id := inst.ID
	history, err := h.st.History(ctx, id, inst.ExecutionID)
	if err != nil {
		return fmt.Errorf("host: replay %q: %w", id, err)
	}
	l := h.fresh(ctx, inst, history)
	defer l.close(ctx)
	res, err := l.exec.Turn(engine.TurnInput{History: l.history, Now: h.opts.Clock()})
	if err != nil {
		return fmt.Errorf("host: replay %q: %w", id, err)
	}
	if res.Err != nil {
		return fmt.Errorf("host: replay %q: %w", id, res.Err)
	}
	if res.Status != inst.Status {
		return fmt.Errorf("host: replay %q: it ends %s, the instance is %s", id, res.Status, inst.Status)
	}
	return nil
}
