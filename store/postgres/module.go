package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/store"
)

// PutModule stores a module and makes it the newest, for ModuleFor and
// ListModules. Storing a hash again replaces its Env and DeployedAt (now,
// when zero). Its bytes live in the database, so any host can run it.
func (s *Store) PutModule(ctx context.Context, m store.Module) error {
	orch, _ := json.Marshal(m.Orchestrations)
	acts, _ := json.Marshal(m.Activities)
	env, _ := json.Marshal(m.Env)
	deployed := m.DeployedAt
	if deployed.IsZero() {
		deployed = time.Now()
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			INSERT INTO modules (hash, wasm, orchestrations, activities, env, deployed_at, seq)
			VALUES ($1, $2, $3, $4, $5, $6, nextval('module_seq'))
			ON CONFLICT (hash) DO UPDATE SET env = excluded.env, deployed_at = excluded.deployed_at, seq = excluded.seq`,
			m.Hash, m.Wasm, string(orch), string(acts), string(env), nanos(deployed))
		if err != nil {
			return err
		}
		if len(m.Orchestrations) > 0 {
			_, err = tx.Exec(ctx, `INSERT INTO orchestration_modules (name, hash) SELECT unnest($1::text[]), $2
				ON CONFLICT (name) DO UPDATE SET hash = excluded.hash`, m.Orchestrations, m.Hash)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: put module %s: %w", m.Hash, err)
	}
	return nil
}

// GetModule returns a module with its bytes, or an error wrapping
// store.ErrNotFound.
func (s *Store) GetModule(ctx context.Context, hash string) (store.Module, error) {
	m := store.Module{Hash: hash}
	var orch, acts, env string
	var deployed int64
	err := s.read(ctx, func(q db) error {
		return q.QueryRow(ctx, `SELECT wasm, orchestrations, activities, env, deployed_at FROM modules WHERE hash = $1`, hash).
			Scan(&m.Wasm, &orch, &acts, &env, &deployed)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return m, fmt.Errorf("postgres: module %s %w", hash, store.ErrNotFound)
	}
	if err != nil {
		return m, fmt.Errorf("postgres: get module %s: %w", hash, err)
	}
	m.DeployedAt = fromNanos(deployed)
	if err := decodeNames(orch, acts, env, &m.Orchestrations, &m.Activities, &m.Env); err != nil {
		return m, fmt.Errorf("postgres: module %s: %w", hash, err)
	}
	return m, nil
}

// ListModules returns every module without its bytes, newest first.
func (s *Store) ListModules(ctx context.Context) ([]store.ModuleInfo, error) {
	var out []store.ModuleInfo
	err := s.read(ctx, func(q db) error {
		out = nil
		rows, err := q.Query(ctx, `SELECT hash, orchestrations, activities, env, deployed_at FROM modules ORDER BY seq DESC`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var m store.ModuleInfo
			var orch, acts, env string
			var deployed int64
			if err := rows.Scan(&m.Hash, &orch, &acts, &env, &deployed); err != nil {
				return err
			}
			m.DeployedAt = fromNanos(deployed)
			if err := decodeNames(orch, acts, env, &m.Orchestrations, &m.Activities, &m.Env); err != nil {
				return fmt.Errorf("module %s: %w", m.Hash, err)
			}
			out = append(out, m)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list modules: %w", err)
	}
	return out, nil
}

// decodeNames decodes a module's JSON lists of orchestrations, activities
// and environment variables.
func decodeNames(orch, acts, env string, orchestrations, activities, environ *[]string) error {
	return errors.Join(json.Unmarshal([]byte(orch), orchestrations), json.Unmarshal([]byte(acts), activities), json.Unmarshal([]byte(env), environ))
}

// ModuleFor returns the hash of the newest module that registers the
// orchestration, or an error wrapping store.ErrNotFound.
func (s *Store) ModuleFor(ctx context.Context, orchestration string) (string, error) {
	var hash string
	err := s.read(ctx, func(q db) error {
		return q.QueryRow(ctx, `SELECT hash FROM orchestration_modules WHERE name = $1`, orchestration).Scan(&hash)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("postgres: orchestration %q %w", orchestration, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("postgres: module for %q: %w", orchestration, err)
	}
	return hash, nil
}

// ModulesWithWork returns the sorted hashes of the modules of the instances
// with messages or activity tasks waiting.
func (s *Store) ModulesWithWork(ctx context.Context) ([]string, error) {
	var hashes []string
	err := s.read(ctx, func(q db) error {
		rows, err := q.Query(ctx, `
			SELECT module_hash FROM instances WHERE id IN (SELECT instance_id FROM messages)
			UNION SELECT module_hash FROM activity_tasks
			ORDER BY 1`)
		if err != nil {
			return err
		}
		hashes, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: modules with work: %w", err)
	}
	return hashes, nil
}

// DeleteModule deletes a module no instance runs on, and hands each
// orchestration it was the newest module of to the newest module left
// that registers it, if any.
func (s *Store) DeleteModule(ctx context.Context, hash string) error {
	err := s.write(ctx, func(tx pgx.Tx) error {
		var orch string
		err := tx.QueryRow(ctx, `SELECT orchestrations FROM modules WHERE hash = $1 FOR UPDATE`, hash).Scan(&orch)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("module %s %w", hash, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM instances WHERE module_hash = $1`, hash).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: %d instances run on it", store.ErrModuleInUse, n)
		}
		var names []string
		if err := json.Unmarshal([]byte(orch), &names); err != nil {
			return fmt.Errorf("decode its orchestrations: %w", err)
		}
		for _, statement := range []string{`DELETE FROM orchestration_modules WHERE hash = $1`, `DELETE FROM modules WHERE hash = $1`} {
			if _, err := tx.Exec(ctx, statement, hash); err != nil {
				return err
			}
		}
		for _, name := range names {
			if _, err := tx.Exec(ctx, `
				INSERT INTO orchestration_modules (name, hash)
				SELECT $1, hash FROM modules WHERE orchestrations::jsonb ? $1 ORDER BY seq DESC LIMIT 1
				ON CONFLICT (name) DO NOTHING`, name); err != nil {
				return fmt.Errorf("orchestration %q: %w", name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: delete module %s: %w", hash, err)
	}
	return nil
}
