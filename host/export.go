package host

import (
	"context"
	"fmt"

	"github.com/durabox/durabox/host/bundle"
)

// Export returns the repro bundle of an instance (package host/bundle): the
// module it runs on, the history and random seed of every execution, and
// its input; enough to replay it with no host and no database (Replayer).
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
	for n := int64(1); n <= inst.ExecutionID; n++ {
		history, err := h.st.History(ctx, id, n)
		if err != nil {
			return nil, fmt.Errorf("host: export %q, execution %d: %w", id, n, err)
		}
		b.Executions = append(b.Executions, bundle.Execution{Number: n, Seed: Seed(id, n, history), History: history})
	}
	return b, nil
}
