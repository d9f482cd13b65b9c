package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/store"
)

// PutModule stores a module and makes it the newest, for ModuleFor and
// ListModules. Storing a hash again replaces its Env and DeployedAt (now,
// when zero).
func (s *Store) PutModule(ctx context.Context, m store.Module) error {
	orch, _ := json.Marshal(m.Orchestrations)
	acts, _ := json.Marshal(m.Activities)
	env, _ := json.Marshal(m.Env)
	deployed := m.DeployedAt
	if deployed.IsZero() {
		deployed = time.Now()
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return putModule(ctx, tx, m, string(orch), string(acts), string(env), deployed)
	})
}

func putModule(ctx context.Context, tx *sql.Tx, m store.Module, orch, acts, env string, deployed time.Time) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO modules (hash, wasm, orchestrations, activities, env, deployed_at, seq)
		VALUES (?, ?, ?, ?, ?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM modules))
		ON CONFLICT (hash) DO UPDATE SET env = excluded.env, deployed_at = excluded.deployed_at, seq = excluded.seq`,
		m.Hash, m.Wasm, orch, acts, env, nanos(deployed))
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
	m := store.Module{Hash: hash}
	var orch, acts, env string
	var deployed int64
	err := s.readers.QueryRowContext(ctx, `SELECT wasm, orchestrations, activities, env, deployed_at FROM modules WHERE hash = ?`, hash).
		Scan(&m.Wasm, &orch, &acts, &env, &deployed)
	if errors.Is(err, sql.ErrNoRows) {
		return m, fmt.Errorf("sqlite: module %s %w", hash, store.ErrNotFound)
	}
	if err != nil {
		return m, fmt.Errorf("sqlite: get module %s: %w", hash, err)
	}
	m.DeployedAt = fromNanos(deployed)
	if err := decodeNames(orch, acts, env, &m.Orchestrations, &m.Activities, &m.Env); err != nil {
		return m, fmt.Errorf("sqlite: module %s: %w", hash, err)
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
		var m store.ModuleInfo
		var orch, acts, env string
		var deployed int64
		if err := rows.Scan(&m.Hash, &orch, &acts, &env, &deployed); err != nil {
			return nil, fmt.Errorf("sqlite: list modules: %w", err)
		}
		m.DeployedAt = fromNanos(deployed)
		if err := decodeNames(orch, acts, env, &m.Orchestrations, &m.Activities, &m.Env); err != nil {
			return nil, fmt.Errorf("sqlite: module %s: %w", m.Hash, err)
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

// decodeNames decodes a module's JSON lists of orchestrations, activities
// and environment variables.
func decodeNames(orch, acts, env string, orchestrations, activities, environ *[]string) error {
	return errors.Join(json.Unmarshal([]byte(orch), orchestrations), json.Unmarshal([]byte(acts), activities), json.Unmarshal([]byte(env), environ))
}

// DeleteModule deletes a module no instance runs on, and hands each
// orchestration it was the newest module of to the newest module left
// that registers it, if any. It returns an error wrapping
// store.ErrNotFound, or store.ErrModuleInUse saying how many instances
// run on it.
func (s *Store) DeleteModule(ctx context.Context, hash string) error {
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var orch string
		err := tx.QueryRowContext(ctx, `SELECT orchestrations FROM modules WHERE hash = ?`, hash).Scan(&orch)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("module %s %w", hash, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if err := refuseInUse(ctx, tx, hash); err != nil {
			return err
		}
		var names []string
		if err := json.Unmarshal([]byte(orch), &names); err != nil {
			return fmt.Errorf("decode its orchestrations: %w", err)
		}
		for _, statement := range []string{`DELETE FROM orchestration_modules WHERE hash = ?`, `DELETE FROM modules WHERE hash = ?`} {
			if _, err := tx.ExecContext(ctx, statement, hash); err != nil {
				return err
			}
		}
		for _, name := range names {
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO orchestration_modules (name, hash)
				SELECT ?1, m.hash FROM modules m, json_each(m.orchestrations) j WHERE j.value = ?1 ORDER BY m.seq DESC LIMIT 1
				ON CONFLICT (name) DO NOTHING`, name); err != nil {
				return fmt.Errorf("orchestration %q: %w", name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete module %s: %w", hash, err)
	}
	return nil
}

// refuseInUse returns store.ErrModuleInUse if instances run on the
// module.
func refuseInUse(ctx context.Context, tx *sql.Tx, hash string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM instances WHERE module_hash = ?`, hash).Scan(&n); err != nil || n == 0 {
		return err
	}
	return fmt.Errorf("%w: %d instances run on it", store.ErrModuleInUse, n)
}
