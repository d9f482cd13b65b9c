package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// PutModule stores a module and makes it the newest, for ModuleFor and
// ListModules. Storing a hash again replaces its Env and DeployedAt (now,
// when zero). Its bytes live in the database, so any host can run it.
func (s *Store) PutModule(ctx context.Context, m store.Module) error {
	r := sqlstore.EncodeModule(m, time.Now())
	err := s.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			INSERT INTO modules (hash, wasm, orchestrations, activities, env, deployed_at, seq)
			VALUES ($1, $2, $3, $4, $5, $6, nextval('module_seq'))
			ON CONFLICT (hash) DO UPDATE SET env = excluded.env, deployed_at = excluded.deployed_at, seq = excluded.seq`,
			m.Hash, m.Wasm, r.Orchestrations, r.Activities, r.Env, r.DeployedAt)
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
	var r sqlstore.ModuleRow
	var wasm []byte
	err := s.read(ctx, func(q db) error {
		return q.QueryRow(ctx, `SELECT wasm, orchestrations, activities, env, deployed_at FROM modules WHERE hash = $1`, hash).
			Scan(&wasm, &r.Orchestrations, &r.Activities, &r.Env, &r.DeployedAt)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Module{Hash: hash}, fmt.Errorf("postgres: module %s %w", hash, store.ErrNotFound)
	}
	if err != nil {
		return store.Module{Hash: hash}, fmt.Errorf("postgres: get module %s: %w", hash, err)
	}
	m, err := r.Module(hash, wasm)
	if err != nil {
		return m, fmt.Errorf("postgres: %w", err)
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
			var hash string
			var r sqlstore.ModuleRow
			if err := rows.Scan(&hash, &r.Orchestrations, &r.Activities, &r.Env, &r.DeployedAt); err != nil {
				return err
			}
			m, err := r.Info(hash)
			if err != nil {
				return err
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
	err := s.write(ctx, func(tx pgx.Tx) error { return sqlstore.DeleteModule(ctx, writeTx{tx}, hash) })
	if err != nil {
		return fmt.Errorf("postgres: delete module %s: %w", hash, err)
	}
	return nil
}

// Orchestrations reads and locks (FOR UPDATE) the module's row.
func (t writeTx) Orchestrations(ctx context.Context, hash string) (string, bool, error) {
	var orch string
	err := t.tx.QueryRow(ctx, `SELECT orchestrations FROM modules WHERE hash = $1 FOR UPDATE`, hash).Scan(&orch)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	return orch, err == nil, err
}

func (t writeTx) InstancesOn(ctx context.Context, hash string) (int, error) {
	var n int
	err := t.tx.QueryRow(ctx, `SELECT count(*) FROM instances WHERE module_hash = $1`, hash).Scan(&n)
	return n, err
}

func (t writeTx) Delete(ctx context.Context, hash string) error {
	for _, statement := range []string{`DELETE FROM orchestration_modules WHERE hash = $1`, `DELETE FROM modules WHERE hash = $1`} {
		if _, err := t.tx.Exec(ctx, statement, hash); err != nil {
			return err
		}
	}
	return nil
}

func (t writeTx) Repoint(ctx context.Context, orchestration string) error {
	_, err := t.tx.Exec(ctx, `
		INSERT INTO orchestration_modules (name, hash)
		SELECT $1, hash FROM modules WHERE orchestrations::jsonb ? $1 ORDER BY seq DESC LIMIT 1
		ON CONFLICT (name) DO NOTHING`, orchestration)
	return err
}
