package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Store is the operations of store.Store written once, over a Dialect:
// those in which the two stores differ only in their SQL's words. Each
// store embeds it and gives it how it reads and writes; the operations it
// does not hold (taking work, leases, commits of turns, moves and resets,
// health) are each store's own, over the logic of this package.
type Store struct {
	d *Dialect
	a Access
}

// WriteFunc runs fn in a write transaction and commits it (fn may run
// again, where the store retries a transaction).
type WriteFunc func(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error

// Access is how a store reads and writes for the operations written once.
type Access struct {
	// Read runs fn on what reads run on (again, where the store retries a
	// read that failed transiently).
	Read func(ctx context.Context, fn func(q DB) error) error
	// Write commits durably: it returns once the transaction is as
	// durable as the store's durability says.
	Write WriteFunc
	// WriteUnsynced commits without waiting for the disk (SQLite) or the
	// server's WAL flush (PostgreSQL): a crash of the process loses
	// nothing, and the next durable commit makes it durable with itself,
	// but a power cut or a server crash before that may lose it. For
	// records whose loss loses nothing acknowledged.
	WriteUnsynced WriteFunc
}

// New returns the operations of a store in dialect d, on a.
func New(d *Dialect, a Access) Store {
	return Store{d: d, a: a}
}

// errorf is an error of the store's: its name, then what failed.
func (s *Store) errorf(format string, args ...any) error {
	return fmt.Errorf(s.d.Name+": "+format, args...)
}

func (s *Store) queryRow(ctx context.Context, q DB, query string, args ...any) Row {
	return q.QueryRow(ctx, s.d.Rebind(query), args...)
}

// collect reads every row of a query with scan, and closes the rows.
func collect[T any](rows QueryRows, err error, scan func(r Rows) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// PutModule stores a module and makes it the newest, for ModuleFor and
// ListModules. Storing a hash again replaces its Env and DeployedAt (now,
// when zero). Its bytes live in the database, so that any host of the
// database can run it.
func (s *Store) PutModule(ctx context.Context, m store.Module) error {
	r := EncodeModule(m, time.Now())
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error {
		err := tx.send(ctx, `
			INSERT INTO modules (hash, wasm, orchestrations, activities, env, deployed_at, seq)
			VALUES (?, ?, ?, ?, ?, ?, `+s.d.NextModuleSeq+`)
			ON CONFLICT (hash) DO UPDATE SET env = excluded.env, deployed_at = excluded.deployed_at, seq = excluded.seq`,
			m.Hash, m.Wasm, r.Orchestrations, r.Activities, r.Env, r.DeployedAt)
		for _, name := range m.Orchestrations {
			if err != nil {
				break
			}
			err = tx.send(ctx, `INSERT INTO orchestration_modules (name, hash) VALUES (?, ?)
				ON CONFLICT (name) DO UPDATE SET hash = excluded.hash`, name, m.Hash)
		}
		return err
	})
	if err != nil {
		return s.errorf("put module %s: %w", m.Hash, err)
	}
	return nil
}

// GetModule returns a module with its bytes, or an error wrapping
// store.ErrNotFound.
func (s *Store) GetModule(ctx context.Context, hash string) (store.Module, error) {
	var r ModuleRow
	var wasm []byte
	err := s.a.Read(ctx, func(q DB) error {
		return s.queryRow(ctx, q, `SELECT wasm, orchestrations, activities, env, deployed_at FROM modules WHERE hash = ?`, hash).
			Scan(&wasm, &r.Orchestrations, &r.Activities, &r.Env, &r.DeployedAt)
	})
	if s.d.NoRows(err) {
		return store.Module{Hash: hash}, s.errorf("module %s %w", hash, store.ErrNotFound)
	}
	if err != nil {
		return store.Module{Hash: hash}, s.errorf("get module %s: %w", hash, err)
	}
	m, err := r.Module(hash, wasm)
	if err != nil {
		return m, s.errorf("%w", err)
	}
	return m, nil
}

// ListModules returns every module without its bytes, newest first.
func (s *Store) ListModules(ctx context.Context) ([]store.ModuleInfo, error) {
	var out []store.ModuleInfo
	err := s.a.Read(ctx, func(q DB) (err error) {
		rows, err := q.Query(ctx, `SELECT hash, orchestrations, activities, env, deployed_at FROM modules ORDER BY seq DESC`)
		out, err = collect(rows, err, func(r Rows) (store.ModuleInfo, error) {
			var hash string
			var m ModuleRow
			if err := r.Scan(&hash, &m.Orchestrations, &m.Activities, &m.Env, &m.DeployedAt); err != nil {
				return store.ModuleInfo{}, err
			}
			return m.Info(hash)
		})
		return err
	})
	if err != nil {
		return nil, s.errorf("list modules: %w", err)
	}
	return out, nil
}

// ModuleFor returns the hash of the newest module that registers the
// orchestration, or an error wrapping store.ErrNotFound.
func (s *Store) ModuleFor(ctx context.Context, orchestration string) (string, error) {
	var hash string
	err := s.a.Read(ctx, func(q DB) error {
		return s.queryRow(ctx, q, `SELECT hash FROM orchestration_modules WHERE name = ?`, orchestration).Scan(&hash)
	})
	if s.d.NoRows(err) {
		return "", s.errorf("orchestration %q %w", orchestration, store.ErrNotFound)
	}
	if err != nil {
		return "", s.errorf("module for %q: %w", orchestration, err)
	}
	return hash, nil
}

// ModulesWithWork returns the sorted hashes of the modules of the instances
// with messages or activity tasks waiting.
func (s *Store) ModulesWithWork(ctx context.Context) ([]string, error) {
	var hashes []string
	err := s.a.Read(ctx, func(q DB) error {
		rows, err := q.Query(ctx, `
			SELECT module_hash FROM instances WHERE id IN (SELECT instance_id FROM messages)
			UNION SELECT module_hash FROM activity_tasks
			ORDER BY 1`)
		hashes, err = collect(rows, err, scanOne[string])
		return err
	})
	if err != nil {
		return nil, s.errorf("modules with work: %w", err)
	}
	return hashes, nil
}

// scanOne scans a row of one column.
func scanOne[T any](r Rows) (T, error) {
	var v T
	err := r.Scan(&v)
	return v, err
}

// DeleteModule deletes a module no instance runs on, and hands each
// orchestration it was the newest module of to the newest module left
// that registers it, if any. It returns an error wrapping
// store.ErrNotFound, or store.ErrModuleInUse saying how many instances
// run on it.
func (s *Store) DeleteModule(ctx context.Context, hash string) error {
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error { return DeleteModule(ctx, tx, hash) })
	if err != nil {
		return s.errorf("delete module %s: %w", hash, err)
	}
	return nil
}

// CreateInstance creates a Pending instance in execution 1, on n.ModuleHash,
// with its OrchestrationStarted message, atomically. It returns an error
// wrapping store.ErrInstanceExists if the id is taken, or store.ErrNotFound
// if the module is not deployed.
func (s *Store) CreateInstance(ctx context.Context, n store.NewInstance) error {
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error { return tx.InsertInstance(ctx, n, nil, nil) })
	if err != nil {
		return s.errorf("create instance %q: %w", n.ID, err)
	}
	return nil
}

// CreateWithEvent creates the instance n with ev after its start or, when
// its id is taken, enqueues ev for the instance there, as EnqueueFor does,
// in one transaction; it reports whether it created the instance
// (store.Instances.CreateWithEvent).
func (s *Store) CreateWithEvent(ctx context.Context, n store.NewInstance, ev engine.Event, max int) (bool, error) {
	if max > 0 {
		if err := CheckPersistent(ev, max); err != nil {
			return false, s.errorf("%w", err)
		}
	}
	var created bool
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error {
		created = false
		err := tx.InsertInstance(ctx, n, nil, nil)
		switch {
		case err == nil:
			created = true
			return tx.Enqueue(ctx, n.ID, ev, VisibleToStart, n.Now)
		case errors.Is(err, store.ErrInstanceExists):
			return EnqueueFor(ctx, tx, n.ID, ev, max, n.Now)
		}
		return err
	})
	if err != nil {
		return false, s.errorf("create %q with event %q: %w", n.ID, ev.Name, err)
	}
	return created, nil
}

// History returns the history of one execution of an instance (0 means the
// current one), in order, or an error wrapping store.ErrNotFound if the
// instance or the execution does not exist, or is no longer kept. An
// execution that has not begun has no events.
func (s *Store) History(ctx context.Context, id string, execution int64) ([]engine.Event, error) {
	var events []engine.Event
	err := s.a.Read(ctx, func(q DB) error {
		current, err := s.d.currentExecution(ctx, q, id)
		if err != nil {
			return err
		}
		if execution, err = HistoryExecution(id, execution, current); err != nil {
			return err
		}
		if s.d.ReadHistory != nil {
			events, err = s.d.ReadHistory(ctx, q, id, execution)
		} else {
			events, err = s.events(ctx, q, id, execution)
		}
		if err != nil {
			return err
		}
		return HistoryKept(id, execution, current, events)
	})
	if err != nil {
		return nil, s.errorf("history of %q: %w", id, err)
	}
	return events, nil
}

// events reads the events of one execution, in order, in one query.
func (s *Store) events(ctx context.Context, q DB, id string, execution int64) ([]engine.Event, error) {
	rows, err := q.Query(ctx, s.d.Rebind(`SELECT event_id, payload FROM history WHERE instance_id = ? AND execution_id = ? ORDER BY event_id`), id, execution)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return Events[[]byte](rows, nil)
}

// SummaryColumns are the columns ScanSummary reads; InstanceColumns,
// those ScanInstance reads.
const (
	SummaryColumns  = `id, name, module_hash, execution_id, status, custom_status, coalesce(parent_id, ''), created_at, updated_at`
	InstanceColumns = SummaryColumns + `, input, result, failure`
)

// ScanSummary scans SummaryColumns, and then the columns that follow into
// extra.
func ScanSummary(row Row, extra ...any) (store.InstanceSummary, error) {
	var i store.InstanceSummary
	var created, updated int64
	var status string
	dest := append([]any{&i.ID, &i.Name, &i.ModuleHash, &i.ExecutionID, &status, &i.CustomStatus, &i.ParentID, &created, &updated}, extra...)
	if err := row.Scan(dest...); err != nil {
		return i, err
	}
	i.Status, i.CreatedAt, i.UpdatedAt = engine.Status(status), FromNanos(created), FromNanos(updated)
	return i, nil
}

// ScanInstance scans InstanceColumns, and then the columns that follow
// into extra.
func ScanInstance(row Row, extra ...any) (store.Instance, error) {
	var input, result []byte
	var failure *string
	sum, err := ScanSummary(row, append([]any{&input, &result, &failure}, extra...)...)
	if err != nil {
		return store.Instance{}, err
	}
	i := store.Instance{ID: sum.ID, Name: sum.Name, ModuleHash: sum.ModuleHash, ExecutionID: sum.ExecutionID, Status: sum.Status,
		Input: input, Result: result, CustomStatus: sum.CustomStatus, ParentID: sum.ParentID, CreatedAt: sum.CreatedAt, UpdatedAt: sum.UpdatedAt}
	i.Failure = DecodeFailure(failure)
	return i, nil
}

// GetInstance returns an instance, or an error wrapping store.ErrNotFound.
func (s *Store) GetInstance(ctx context.Context, id string) (store.Instance, error) {
	var inst store.Instance
	err := s.a.Read(ctx, func(q DB) (err error) {
		inst, err = ScanInstance(s.queryRow(ctx, q, `SELECT `+InstanceColumns+` FROM instances WHERE id = ?`, id))
		return err
	})
	if s.d.NoRows(err) {
		return inst, s.errorf("instance %q %w", id, store.ErrNotFound)
	}
	if err != nil {
		return inst, s.errorf("get instance %q: %w", id, err)
	}
	return inst, nil
}

// Waits returns the waits the last turn of an instance kept, or an error
// wrapping store.ErrNotFound, or store.ErrCorrupt when they do not decode.
func (s *Store) Waits(ctx context.Context, id string) ([]engine.Wait, error) {
	var kept []byte
	err := s.a.Read(ctx, func(q DB) error {
		return s.queryRow(ctx, q, `SELECT waits FROM instances WHERE id = ?`, id).Scan(&kept)
	})
	if s.d.NoRows(err) {
		return nil, s.errorf("instance %q %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, s.errorf("waits of instance %q: %w", id, err)
	}
	var waits []engine.Wait
	if len(kept) > 0 {
		if err := json.Unmarshal(kept, &waits); err != nil {
			return nil, s.errorf("waits of instance %q: %w: they do not decode: %w", id, store.ErrCorrupt, err)
		}
	}
	return waits, nil
}

// currentExecution returns the instance's current execution, or an error
// wrapping store.ErrNotFound.
func (d *Dialect) currentExecution(ctx context.Context, q DB, id string) (int64, error) {
	var current int64
	err := q.QueryRow(ctx, d.Rebind(`SELECT execution_id FROM instances WHERE id = ?`), id).Scan(&current)
	if d.NoRows(err) {
		return 0, fmt.Errorf("instance %q %w", id, store.ErrNotFound)
	}
	return current, err
}

// where returns an empty condition in the dialect's placeholders.
func (d *Dialect) where() *Where {
	w := NewWhere(d.Placeholder)
	w.finishedAt = d.FinishedAt
	return w
}

// ListInstances returns a page of the instances q.Filter selects, newest
// first, and among those created at the same time the one created last
// first. Each filter has an index (instances_status, _name, _module,
// _parent, the primary key for an id prefix), so a page costs about its
// length, not the number of instances.
func (s *Store) ListInstances(ctx context.Context, q store.InstanceQuery) (store.InstancePage, error) {
	w := s.d.where()
	w.Filter(q.Filter)
	query, err := ListQuery(w, q, SummaryColumns, s.d.Seq)
	if err != nil {
		return store.InstancePage{}, s.errorf("%w", err)
	}
	var page store.InstancePage
	err = s.a.Read(ctx, func(r DB) error {
		rows, err := r.Query(ctx, query, w.Args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		page, err = Page(rows, q.Limit, func(r Rows, seq *int64) (store.InstanceSummary, error) { return ScanSummary(r, seq) })
		return err
	})
	if err != nil {
		return page, s.errorf("list instances: %w", err)
	}
	return page, nil
}

// CountInstances counts the instances f selects, per module and status,
// ordered by module and status.
func (s *Store) CountInstances(ctx context.Context, f store.InstanceFilter) ([]store.InstanceCount, error) {
	w := s.d.where()
	w.Filter(f)
	var out []store.InstanceCount
	err := s.a.Read(ctx, func(r DB) error {
		rows, err := r.Query(ctx, `SELECT module_hash, status, count(*) FROM instances WHERE `+w.String()+
			` GROUP BY module_hash, status ORDER BY module_hash, status`, w.Args...)
		out, err = collect(rows, err, func(r Rows) (store.InstanceCount, error) {
			var c store.InstanceCount
			var status string
			err := r.Scan(&c.ModuleHash, &status, &c.Count)
			c.Status = engine.Status(status)
			return c, err
		})
		return err
	})
	if err != nil {
		return nil, s.errorf("count instances: %w", err)
	}
	return out, nil
}

// executionsQuery reads an instance's executions with history (?1),
// oldest first: each one's number, its first event's id and payload, and
// its last event's. It costs a few lookups in history's primary key per
// execution, whatever the length of each: the executions are found one
// after another by the least execution_id above the last (a recursive
// query), the ids of their first and last events by a lookup each, and
// those events by their keys. (A count of the events, or a join with an
// aggregate of them, reads every event, and SQLite 3.54 plans that join
// as a scan of the history for each event: a status of an instance of
// 8,000 events took 14 s. The ids are looked up in a materialized step of
// their own: as conditions of the join, PostgreSQL hashed every event of
// the instance and looked each one's execution up again, 45 ms for 2,002
// events; TestStatusCostsTheSameAtAnyLength in both stores.) The engine
// numbers an execution's events from 1 without a gap and history only
// appends, so the length of an execution is its last id less its first,
// plus one.
const executionsQuery = `
	WITH RECURSIVE x(e) AS (
		SELECT min(execution_id) FROM history WHERE instance_id = ?1
		UNION ALL
		SELECT (SELECT min(execution_id) FROM history WHERE instance_id = ?1 AND execution_id > x.e) FROM x WHERE x.e IS NOT NULL
	), y(e, first, last) AS MATERIALIZED (
		SELECT e, (SELECT min(event_id) FROM history WHERE instance_id = ?1 AND execution_id = x.e),
			(SELECT max(event_id) FROM history WHERE instance_id = ?1 AND execution_id = x.e)
		FROM x WHERE x.e IS NOT NULL
	)
	SELECT e, first, (SELECT payload FROM history WHERE instance_id = ?1 AND execution_id = e AND event_id = first),
		last, (SELECT payload FROM history WHERE instance_id = ?1 AND execution_id = e AND event_id = last)
	FROM y ORDER BY e`

// Executions describes the executions of an instance whose history is
// kept, oldest first, from the first and last event of each.
func (s *Store) Executions(ctx context.Context, id string) ([]store.Execution, error) {
	var out []store.Execution
	err := s.a.Read(ctx, func(r DB) error {
		current, err := s.d.currentExecution(ctx, r, id)
		if err != nil {
			return err
		}
		rows, err := r.Query(ctx, s.d.Rebind(executionsQuery), id)
		out, err = collect(rows, err, func(r Rows) (store.Execution, error) {
			var execution, firstID, lastID int64
			var first, last []byte
			err := r.Scan(&execution, &firstID, &first, &lastID, &last)
			return Execution(execution, lastID-firstID+1, first, last), err
		})
		out = WithCurrent(out, current)
		return err
	})
	if err != nil {
		return nil, s.errorf("executions of %q: %w", id, err)
	}
	return out, nil
}

// Enqueue adds a message for an instance at now, visible at once, with
// the audit record of the request that asks for it, when not nil, in the
// same transaction. It returns an error wrapping store.ErrNotFound if the
// instance does not exist, or store.ErrFinished if it has finished.
func (s *Store) Enqueue(ctx context.Context, instanceID string, ev engine.Event, now time.Time, audit *store.AuditRecord) error {
	return s.enqueueFor(ctx, instanceID, ev, 0, now, audit)
}

// EnqueuePersistent adds a persistent event for an instance, visible at
// once, unless its current execution has taken and has waiting max
// persistent events between them: then it returns an error wrapping
// store.ErrTooManyEvents. It stores audit and returns store.ErrNotFound
// and store.ErrFinished as Enqueue does.
func (s *Store) EnqueuePersistent(ctx context.Context, instanceID string, ev engine.Event, max int, now time.Time, audit *store.AuditRecord) error {
	if err := CheckPersistent(ev, max); err != nil {
		return s.errorf("%w", err)
	}
	return s.enqueueFor(ctx, instanceID, ev, max, now, audit)
}

// enqueueFor adds a message at now for an instance that has not finished;
// with max > 0, a persistent event within max; with audit, that record.
func (s *Store) enqueueFor(ctx context.Context, id string, ev engine.Event, max int, now time.Time, audit *store.AuditRecord) error {
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error {
		if err := EnqueueFor(ctx, tx, id, ev, max, now); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, audit)
	})
	if err != nil {
		return s.errorf("enqueue for %q: %w", id, err)
	}
	return nil
}

// Purge deletes a finished instance with the history of all its
// executions, its messages and its activity tasks; its children live on
// and report to nobody. It returns an error wrapping store.ErrNotFinished
// if the instance has not finished, or store.ErrNotFound if it does not
// exist.
func (s *Store) Purge(ctx context.Context, id string) error {
	if err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error { return Purge(ctx, tx, id) }); err != nil {
		return s.errorf("purge %q: %w", id, err)
	}
	return nil
}

// PurgeInstances purges up to max of the finished instances f selects, in
// one transaction, and returns their ids. It takes them in no order: a
// sort would read every one selected for each batch. Instances another
// host is purging at once are skipped (Dialect.SkipLocked).
func (s *Store) PurgeInstances(ctx context.Context, f store.InstanceFilter, max int) ([]string, error) {
	if err := CheckMax(max); err != nil {
		return nil, s.errorf("purge instances: %w", err)
	}
	w := s.d.where()
	w.Filter(f)
	w.Add(Finished)
	query := `SELECT id FROM instances WHERE ` + w.String() + ` LIMIT ` + w.Arg(max) + s.d.SkipLocked
	var ids []string
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) (err error) {
		rows, err := tx.DB.Query(ctx, query, w.Args...)
		if ids, err = collect(rows, err, scanOne[string]); err != nil {
			return err
		}
		return PurgeAll(ctx, tx, ids)
	})
	if err != nil {
		return nil, s.errorf("purge instances: %w", err)
	}
	return ids, nil
}

// DeleteExecutions deletes the history of up to max of the executions
// that continued as new before before, those that ended first first, in
// one transaction, and returns how many. Executions another host is
// deleting at once are skipped (Dialect.SkipLocked).
func (s *Store) DeleteExecutions(ctx context.Context, before time.Time, max int) (int, error) {
	if err := CheckMax(max); err != nil {
		return 0, s.errorf("delete executions: %w", err)
	}
	type execution struct {
		instance string
		id       int64
	}
	var old []execution
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) (err error) {
		rows, err := tx.DB.Query(ctx, s.d.Rebind(`SELECT instance_id, execution_id FROM continued_executions WHERE ended_at < ? ORDER BY ended_at LIMIT ?`+s.d.SkipLocked),
			Nanos(before), max)
		old, err = collect(rows, err, func(r Rows) (x execution, err error) { return x, r.Scan(&x.instance, &x.id) })
		if err != nil {
			return err
		}
		for _, x := range old {
			for _, statement := range []string{
				`DELETE FROM history WHERE instance_id = ? AND execution_id = ?`,
				`DELETE FROM continued_executions WHERE instance_id = ? AND execution_id = ?`,
			} {
				if err := tx.send(ctx, statement, x.instance, x.id); err != nil {
					return fmt.Errorf("execution %d of %q: %w", x.id, x.instance, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, s.errorf("delete executions: %w", err)
	}
	return len(old), nil
}

// Oldest reads the item a query of the queue's figures selects
// (instance, what, since), if any.
func (d *Dialect) Oldest(ctx context.Context, q DB, query string, args ...any) (*store.WaitingItem, error) {
	var w store.WaitingItem
	var since int64
	err := q.QueryRow(ctx, query, args...).Scan(&w.InstanceID, &w.What, &since)
	if d.NoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	w.Since = FromNanos(since)
	return &w, nil
}

// QueueCounts reads the task queues' counts query selects: a row of
// queue, waiting and running each.
func QueueCounts(ctx context.Context, q DB, query string, args ...any) ([]store.TaskQueueStats, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.TaskQueueStats
	for rows.Next() {
		var c store.TaskQueueStats
		if err := rows.Scan(&c.Queue, &c.Waiting, &c.Running); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// The statements of a completion from outside (Activities.
// CompleteFromOutside): TakeAwaited removes the task that waits with its
// secret before its deadline and returns what its result's message needs;
// WhyNotAwaited reads, when it removed none, whether the task is there,
// whether it waits with that secret, and its deadline.
const (
	TakeAwaited = `DELETE FROM activity_tasks WHERE id = ? AND pending_token = ? AND visible_at > ?
		RETURNING instance_id, execution_id, schedule_id`
	WhyNotAwaited = `SELECT coalesce(pending_token = ?, false), visible_at FROM activity_tasks WHERE id = ?`
)

// NotAwaited is the error of a completion from outside of task id that
// TakeAwaited did not take: found says whether WhyNotAwaited found the
// task, waits whether it waits with the secret given, until its deadline.
func NotAwaited(id int64, found, waits bool, until, now int64) error {
	var why string
	switch {
	case !found:
		why = "no such task waits: it was completed already, or its instance ended or was purged"
	case !waits:
		why = "the task does not wait for this token: its attempt's deadline passed and it was delivered again, or it was never given out"
	default:
		why = fmt.Sprintf("its attempt's deadline passed at %s, %s before now", FromNanos(until).UTC().Format(time.RFC3339), time.Duration(now-until).Round(time.Millisecond))
	}
	return fmt.Errorf("complete activity %d from outside: %w: %s", id, store.ErrLeaseLost, why)
}
