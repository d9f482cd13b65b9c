package ops

import (
	"context"
	"fmt"

	"github.com/durabox/durabox/host/bundle"
	"github.com/durabox/durabox/host/internal/seed"
)

// Export carries out Host.Export (package host says what it does).
func (o *Ops) Export(ctx context.Context, id string) (*bundle.Bundle, error) {
	inst, err := o.Instance(ctx, id)
	if err != nil {
		return nil, err
	}
	m, err := o.st.GetModule(ctx, inst.ModuleHash)
	if err != nil {
		return nil, fmt.Errorf("host: export %q: %w", id, err)
	}
	b := &bundle.Bundle{InstanceID: inst.ID, Name: inst.Name, Status: inst.Status, Input: inst.Input, Module: m.Wasm, ModuleHash: m.Hash, ExportedAt: o.opts.Clock()}
	executions, err := o.st.Executions(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("host: export %q: %w", id, err)
	}
	for _, x := range executions {
		history, err := o.st.History(ctx, id, x.ID)
		if err != nil {
			return nil, fmt.Errorf("host: export %q, execution %d: %w", id, x.ID, err)
		}
		b.Executions = append(b.Executions, bundle.Execution{Number: x.ID, Seed: seed.Of(id, x.ID, history), History: history})
	}
	return b, nil
}
