package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// PutModule stores a module and makes it the newest, for ModuleFor and
// ListModules. Storing a hash again replaces its Env and DeployedAt (now,
// when zero).
func (s *Store) PutModule(ctx context.Context, m store.Module) error {
	r := sqlstore.EncodeModule(m, time.Now())
	return s.write(ctx, func(ctx context.Context, tx txConn) error { return putModule(ctx, tx, m, r) })
}

func putModule(ctx context.Context, tx txConn, m store.Module, r sqlstore.ModuleRow) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO modules (hash, wasm, orchestrations, activities, env, deployed_at, seq)
		VALUES (?, ?, ?, ?, ?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM modules))
		ON CONFLICT (hash) DO UPDATE SET env = excluded.env, deployed_at = excluded.deployed_at, seq = excluded.seq`,
		m.Hash, m.Wasm, r.Orchestrations, r.Activities, r.Env, r.DeployedAt)
	if err != nil {
		return fmt.Errorf("sqlite: put module %s: %w", m.Hash, err)
	}
	for _, name := range m.Orchestrations {
		_, err = tx.ExecContext(ctx, `INSERT INTO orchestration_modules (name, hash) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET hash = excluded.hash`, name, m.Hash)
		if err != nil {
			return fmt.Errorf("sqlite: put module %s: %w", m.Hash, err)
		}
	}
	return nil
}

// GetModule returns a module with its bytes, or an error wrapping
// store.ErrNotFound.
func (s *Store) GetModule(ctx context.Context, hash string) (store.Module, error) {
	var r sqlstore.ModuleRow
	var wasm []byte
	err := s.readers.QueryRowContext(ctx, `SELECT wasm, orchestrations, activities, env, deployed_at FROM modules WHERE hash = ?`, hash).
		Scan(&wasm, &r.Orchestrations, &r.Activities, &r.Env, &r.DeployedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Module{Hash: hash}, fmt.Errorf("sqlite: module %s %w", hash, store.ErrNotFound)
	}
	if err != nil {
		return store.Module{Hash: hash}, fmt.Errorf("sqlite: get module %s: %w", hash, err)
	}
	m, err := r.Module(hash, wasm)
	if err != nil {
		return m, fmt.Errorf("sqlite: %w", err)
	}
	return m, nil
}

// ListModules returns every module without its bytes, newest first.
func (s *Store) ListModules(ctx context.Context) ([]store.ModuleInfo, error) {
	rows, err := s.readers.QueryContext(ctx, `SELECT hash, orchestrations, activities, env, deployed_at FROM modules ORDER BY seq DESC`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list modules: %w", err)
	}
	defer rows.Close()
	var out []store.ModuleInfo
	for rows.Next() {
		var hash string
		var r sqlstore.ModuleRow
		if err := rows.Scan(&hash, &r.Orchestrations, &r.Activities, &r.Env, &r.DeployedAt); err != nil {
			return nil, fmt.Errorf("sqlite: list modules: %w", err)
		}
		m, err := r.Info(hash)
		if err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ModuleFor returns the hash of the newest module that registers the
// orchestration, or an error wrapping store.ErrNotFound.
func (s *Store) ModuleFor(ctx context.Context, orchestration string) (string, error) {
	var hash string
	err := s.readers.QueryRowContext(ctx, `SELECT hash FROM orchestration_modules WHERE name = ?`, orchestration).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("sqlite: orchestration %q %w", orchestration, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: module for %q: %w", orchestration, err)
	}
	return hash, nil
}

// ModulesWithWork returns the sorted hashes of the modules of the instances
// with messages or activity tasks waiting.
func (s *Store) ModulesWithWork(ctx context.Context) ([]string, error) {
	rows, err := s.readers.QueryContext(ctx, `
		SELECT module_hash FROM instances WHERE id IN (SELECT instance_id FROM messages)
		UNION SELECT module_hash FROM activity_tasks
		ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: modules with work: %w", err)
	}
	defer rows.Close()
	var hashes []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("sqlite: modules with work: %w", err)
		}
		hashes = append(hashes, h)
	}
	return hashes, rows.Err()
}

// DeleteModule deletes a module no instance runs on, and hands each
// orchestration it was the newest module of to the newest module left
// that registers it, if any. It returns an error wrapping
// store.ErrNotFound, or store.ErrModuleInUse saying how many instances
// run on it.
func (s *Store) DeleteModule(ctx context.Context, hash string) error {
	err := s.write(ctx, func(ctx context.Context, tx txConn) error { return sqlstore.DeleteModule(ctx, writeTx{tx, s}, hash) })
	if err != nil {
		return fmt.Errorf("sqlite: delete module %s: %w", hash, err)
	}
	return nil
}

func (t writeTx) Orchestrations(ctx context.Context, hash string) (string, bool, error) {
	var orch string
	err := t.tx.QueryRowContext(ctx, `SELECT orchestrations FROM modules WHERE hash = ?`, hash).Scan(&orch)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return orch, err == nil, err
}

func (t writeTx) InstancesOn(ctx context.Context, hash string) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM instances WHERE module_hash = ?`, hash).Scan(&n)
	return n, err
}

func (t writeTx) Delete(ctx context.Context, hash string) error {
	for _, statement := range []string{`DELETE FROM orchestration_modules WHERE hash = ?`, `DELETE FROM modules WHERE hash = ?`} {
		if _, err := t.tx.ExecContext(ctx, statement, hash); err != nil {
			return err
		}
	}
	return nil
}

func (t writeTx) Repoint(ctx context.Context, orchestration string) error {
	_, err := t.tx.ExecContext(ctx, `
		INSERT INTO orchestration_modules (name, hash)
		SELECT ?1, m.hash FROM modules m, json_each(m.orchestrations) j WHERE j.value = ?1 ORDER BY m.seq DESC LIMIT 1
		ON CONFLICT (name) DO NOTHING`, orchestration)
	return err
}
