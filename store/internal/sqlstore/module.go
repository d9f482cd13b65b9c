package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/store"
)

// ModuleRow is a module's row as both stores keep it: its lists of names
// as JSON text and its deployment time in Unix nanoseconds.
type ModuleRow struct {
	Orchestrations, Activities, Env string
	DeployedAt                      int64
}

// EncodeModule is m's row; a zero DeployedAt is now.
func EncodeModule(m store.Module, now time.Time) ModuleRow {
	orch, _ := json.Marshal(m.Orchestrations)
	acts, _ := json.Marshal(m.Activities)
	env, _ := json.Marshal(m.Env)
	deployed := m.DeployedAt
	if deployed.IsZero() {
		deployed = now
	}
	return ModuleRow{Orchestrations: string(orch), Activities: string(acts), Env: string(env), DeployedAt: Nanos(deployed)}
}

// Info decodes the row of the module hash.
func (r ModuleRow) Info(hash string) (store.ModuleInfo, error) {
	m := store.ModuleInfo{Hash: hash, DeployedAt: FromNanos(r.DeployedAt)}
	err := errors.Join(json.Unmarshal([]byte(r.Orchestrations), &m.Orchestrations), json.Unmarshal([]byte(r.Activities), &m.Activities),
		json.Unmarshal([]byte(r.Env), &m.Env))
	if err != nil {
		return m, fmt.Errorf("module %s: %w", hash, err)
	}
	return m, nil
}

// Module is the module of the row, with its bytes.
func (r ModuleRow) Module(hash string, wasm []byte) (store.Module, error) {
	i, err := r.Info(hash)
	return store.Module{Hash: hash, Wasm: wasm, Orchestrations: i.Orchestrations, Activities: i.Activities, Env: i.Env, DeployedAt: i.DeployedAt}, err
}

// ModuleTx is a store's statements for deleting a module, in one
// transaction.
type ModuleTx interface {
	// Orchestrations reads the module's list of orchestrations (JSON);
	// found is false when the module is not deployed.
	Orchestrations(ctx context.Context, hash string) (orch string, found bool, err error)
	// InstancesOn counts the instances that run on the module.
	InstancesOn(ctx context.Context, hash string) (int, error)
	// Delete deletes the module and the orchestrations it is the newest
	// module of.
	Delete(ctx context.Context, hash string) error
	// Repoint makes the newest module that registers the orchestration
	// its module, if there is one.
	Repoint(ctx context.Context, orchestration string) error
}

// DeleteModule deletes a module no instance runs on, and hands each
// orchestration it was the newest module of to the newest module left
// that registers it, if any: the rules of store.Store.DeleteModule.
func DeleteModule(ctx context.Context, tx ModuleTx, hash string) error {
	orch, found, err := tx.Orchestrations(ctx, hash)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("module %s %w", hash, store.ErrNotFound)
	}
	n, err := tx.InstancesOn(ctx, hash)
	if err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("%w: %d instances run on it", store.ErrModuleInUse, n)
	}
	var names []string
	if err := json.Unmarshal([]byte(orch), &names); err != nil {
		return fmt.Errorf("decode its orchestrations: %w", err)
	}
	if err := tx.Delete(ctx, hash); err != nil {
		return err
	}
	for _, name := range names {
		if err := tx.Repoint(ctx, name); err != nil {
			return fmt.Errorf("orchestration %q: %w", name, err)
		}
	}
	return nil
}
