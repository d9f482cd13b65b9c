package host

import (
	"context"
	"fmt"

	"github.com/durabox/durabox/host/bundle"
)

// Export returns the repro bundle of an instance (package host/bundle): the
// module it runs on, the history and random seed of every execution whose
// history is kept (retention deletes those of executions that continued as
// new long ago), and its input; enough to replay it with no host and no
// database (Replayer).
func (h *Host) Export(ctx context.Context, id string) (*bundle.Bundle, error) {
	inst, err := h.Instance(ctx, id)
	if err != nil {
		return nil, err
	}
	m, err := h.st.GetModule(ctx, inst.ModuleHash)
	if err != nil {
		return nil, fmt.Errorf("host: export %q: %w", id, err)
	}
	b := &bundle.Bundle{InstanceID: inst.ID, Name: inst.Name, Status: inst.Status, Input: inst.Input, Module: m.Wasm, ModuleHash: m.Hash, ExportedAt: h.opts.Clock()}
	executions, err := h.st.Executions(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("host: export %q: %w", id, err)
	}
	for _, x := range executions {
		history, err := h.st.History(ctx, id, x.ID)
		if err != nil {
			return nil, fmt.Errorf("host: export %q, execution %d: %w", id, x.ID, err)
		}
		b.Executions = append(b.Executions, bundle.Execution{Number: x.ID, Seed: Seed(id, x.ID, history), History: history})
	}
	return b, nil
}
