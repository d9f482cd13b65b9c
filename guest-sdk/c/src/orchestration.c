/*
 * orchestration.c: an orchestration instance, guest side. A wasm instance
 * runs exactly one (abi/ABI.md, "Instances"), so its state is this file's
 * static variables.
 *
 * The orchestration function runs again from its first line after every
 * activation (run). Each call that emits a command, or decides something a
 * later run must decide the same way (a select's winner, the time it read), takes the next
 * entry of the tape: the first run that reaches it records the entry (and
 * emits the command, with the next seq), and later runs find it there and
 * get the same future, or the same decision, back. An entry that differs
 * from what the code asks for now means the code did not repeat itself:
 * the instance fails, saying where (diverge). Jobs resolve futures by seq;
 * the instance's cancellation emits its cancel commands outside the tape,
 * while jobs are applied.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

struct dbx_future {
	uint64_t seq;  /* of the command that started it; 0 for none */
	uint64_t kind; /* that command's kind */
	bool resolved;
	bool open; /* its job has not come, and it was not cancelled */
	char *name; /* the activity's, child's or event's name, for messages */
	dbx_bytes result;
	char *error; /* NULL when it succeeded */
	char *details;
};

/* Entries of the tape that are not commands: what a call read, for later
 * runs to read the same. */
enum { TAPE_SELECT = 100, TAPE_NOW, TAPE_CANCELLED };

typedef struct {
	uint64_t kind;    /* a command's kind, or a TAPE_ kind */
	uint64_t hash;    /* of what the call was given */
	const char *what; /* the call, for a divergence's message */
	dbx_future *future;
	int64_t value; /* what a TAPE_ entry read: a select's winner, the time */
} tape_entry;

typedef struct {
	char *name;
	dbx_query_fn fn;
	void *data;
} query_handler;

typedef struct {
	char *change;
	bool taken;
	size_t run; /* the last run that asked */
} patch_answer;

/* dbx_ctx is a handle only: the instance's state is o, below. */
struct dbx_ctx {
	char unused;
};

static struct {
	dbx_ctx ctx;
	dbx_orchestration_fn fn;
	const char *fn_name;
	bool started, ended;
	bool running; /* the orchestration function runs */
	char *instance_id;
	dbx_bytes input;
	int64_t now;
	bool replaying;
	char *cancelled;
	uint64_t seq;
	dbx_future **futures; /* by seq: the futures of open operations */
	size_t nfutures;
	tape_entry *tape;
	size_t ntape, cursor;
	buf commands; /* the activation's, encoded */
	size_t logs, log_index;
	size_t runs; /* how many runs began */
	query_handler *queries;
	size_t nqueries;
	patch_answer *patches;
	size_t npatches;
	/* querying is the name of the query whose handler runs; misuse what it
	 * called that a query may not. */
	const char *querying, *misuse;
} o;

/* never is the future of an operation that does not start: one asked for
 * after the end, or by a query's handler. It never resolves. */
static dbx_future never;

static void emit(wire_command *c) {
	c->seq = ++o.seq;
	wire_encode_command(&o.commands, c);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

static uint64_t hash_command(const wire_command *c) {
	uint64_t h = fnv(0xcbf29ce484222325ULL, &c->kind, sizeof c->kind);
	const char *strs[] = {c->name, c->instance_id};
	for (int i = 0; i < 2; i++)
		h = fnv(fnv(h, strs[i] ? strs[i] : "", strs[i] ? strlen(strs[i]) : 0), "", 1);
	h = fnv(fnv(h, c->input.ptr, c->input.len), "", 1);
	h = fnv(fnv(h, c->output.ptr, c->output.len), "", 1);
	int64_t nums[] = {c->delay, (int64_t)c->target, (int64_t)c->timeout_ms, c->detached, c->persistent};
	return fnv(h, nums, sizeof nums);
}

static const char *const kind_names[] = {
    [CMD_SCHEDULE_ACTIVITY] = "dbx_activity",     [CMD_START_TIMER] = "dbx_timer",
    [CMD_COMPLETE] = "dbx_complete",              [CMD_FAIL] = "dbx_fail",
    [CMD_CANCEL_TIMER] = "dbx_cancel",            [CMD_CANCEL_ACTIVITY] = "dbx_cancel",
    [CMD_WAIT_EVENT] = "dbx_wait_event",          [CMD_WAIT_EVENT_PERSISTENT] = "dbx_wait_event_persistent",
    [CMD_CANCEL_WAIT] = "dbx_cancel",             [CMD_CONTINUE_AS_NEW] = "dbx_continue_as_new",
    [CMD_START_CHILD] = "dbx_child",              [CMD_CANCEL_CHILD] = "dbx_cancel",
    [CMD_SET_CUSTOM_STATUS] = "dbx_set_custom_status", [CMD_PATCH] = "dbx_patched",
    [CMD_RAISE] = "dbx_raise",
};

static const char *describe(uint64_t kind, const char *name) {
	const char *call = kind == TAPE_SELECT      ? "dbx_select"
	                   : kind == TAPE_NOW       ? "dbx_now"
	                   : kind == TAPE_CANCELLED ? "dbx_cancelled"
	                                            : kind_names[kind];
	return name ? dbx_fmt("%s(\"%s\")", call, name) : call;
}

static void end_with(wire_command *c);

/* diverge fails the instance: the code asked for now where the tape holds
 * what it asked for at this point before. */
static void diverge(const char *now) {
	const char *before = o.cursor < o.ntape ? o.tape[o.cursor].what : "nothing more";
	char *msg = dbx_fmt("durabox: the orchestration did not repeat itself: run again from the start, "
	                    "its call %zu was %s where it was %s before; an orchestration must decide only from its "
	                    "input and its futures' results (race futures with dbx_select, not dbx_ready)",
	                    o.cursor + 1, now, before);
	end_with(&(wire_command){.kind = CMD_FAIL, .fail_message = msg});
}

/* replayed returns the tape's next entry when the code asked for it on an
 * earlier run, after checking it is the same call; NULL when the code goes
 * further than before (and the caller records the call), or when the
 * instance ended on a divergence. */
static tape_entry *replayed(uint64_t kind, uint64_t hash, const char *name) {
	if (o.cursor >= o.ntape)
		return NULL;
	tape_entry *e = &o.tape[o.cursor];
	if (e->kind != kind || e->hash != hash) {
		diverge(describe(kind, name));
		return NULL;
	}
	o.cursor++;
	return e;
}

static tape_entry *record(uint64_t kind, uint64_t hash, const char *name) {
	if (o.ntape % 64 == 0)
		o.tape = xrealloc(o.tape, (o.ntape + 64) * sizeof *o.tape);
	tape_entry *e = &o.tape[o.ntape++];
	char *what = (char *)describe(kind, name);
	*e = (tape_entry){.kind = kind, .hash = hash, .what = xstrndup(what, strlen(what))};
	o.cursor = o.ntape;
	return e;
}

/* usable says whether the orchestration may act now: not while a query's
 * handler runs (which fails the query), nor after the end. */
static bool usable(const char *call) {
	if (o.querying) {
		if (!o.misuse)
			o.misuse = call;
		return false;
	}
	if (!o.running)
		die("%s was called outside a run of an orchestration (from an activity, or from dbx_main): only the "
		    "orchestration function may use its context, while it runs",
		    call);
	return !o.ended;
}

static dbx_bytes or_null(dbx_bytes json) { return json.len ? json : dbx_str("null"); }

/* operation emits c, an operation's command, as a call of the code, and
 * returns its future. */
static dbx_future *operation(wire_command *c, const char *call) {
	if (!usable(call))
		return &never;
	uint64_t h = hash_command(c);
	tape_entry *e = replayed(c->kind, h, c->name);
	if (e)
		return e->future;
	if (o.ended)
		return &never;
	e = record(c->kind, h, c->name);
	emit(c);
	dbx_future *f = xmalloc(sizeof *f);
	*f = (dbx_future){.seq = o.seq, .kind = c->kind, .name = c->name ? xstrndup(c->name, strlen(c->name)) : NULL};
	e->future = f;
	if (c->kind == CMD_START_CHILD && c->detached) {
		f->resolved = true;
		return f;
	}
	f->open = true;
	if (o.seq >= o.nfutures) {
		size_t n = o.nfutures ? o.nfutures * 2 : 64;
		while (n <= o.seq)
			n *= 2;
		o.futures = xrealloc(o.futures, n * sizeof *o.futures);
		memset(o.futures + o.nfutures, 0, (n - o.nfutures) * sizeof *o.futures);
		o.nfutures = n;
	}
	o.futures[o.seq] = f;
	return f;
}

dbx_future *dbx_activity_timeout(dbx_ctx *ctx, const char *name, dbx_bytes input, uint32_t timeout_ms) {
	(void)ctx;
	return operation(&(wire_command){.kind = CMD_SCHEDULE_ACTIVITY, .name = name, .input = or_null(input), .timeout_ms = timeout_ms},
	                 "dbx_activity");
}

dbx_future *dbx_activity(dbx_ctx *ctx, const char *name, dbx_bytes input) { return dbx_activity_timeout(ctx, name, input, 0); }

dbx_future *dbx_timer(dbx_ctx *ctx, int64_t delay_ns) {
	(void)ctx;
	return operation(&(wire_command){.kind = CMD_START_TIMER, .delay = delay_ns}, "dbx_timer");
}

dbx_future *dbx_wait_event(dbx_ctx *ctx, const char *name) {
	(void)ctx;
	return operation(&(wire_command){.kind = CMD_WAIT_EVENT, .name = name}, "dbx_wait_event");
}

dbx_future *dbx_wait_event_persistent(dbx_ctx *ctx, const char *name) {
	(void)ctx;
	return operation(&(wire_command){.kind = CMD_WAIT_EVENT_PERSISTENT, .name = name}, "dbx_wait_event_persistent");
}

dbx_future *dbx_child(dbx_ctx *ctx, const char *name, dbx_bytes input, const char *id) {
	(void)ctx;
	return operation(&(wire_command){.kind = CMD_START_CHILD, .name = name, .input = or_null(input), .instance_id = id}, "dbx_child");
}

dbx_future *dbx_child_detached(dbx_ctx *ctx, const char *name, dbx_bytes input, const char *id) {
	(void)ctx;
	return operation(
	    &(wire_command){.kind = CMD_START_CHILD, .name = name, .input = or_null(input), .instance_id = id, .detached = true},
	    "dbx_child_detached");
}

dbx_future *dbx_raise(dbx_ctx *ctx, const char *instance, const char *name, dbx_bytes data, bool persistent) {
	(void)ctx;
	return operation(
	    &(wire_command){.kind = CMD_RAISE, .name = name, .instance_id = instance, .input = or_null(data), .persistent = persistent},
	    "dbx_raise");
}

bool dbx_ready(const dbx_future *f) { return f->resolved; }
const char *dbx_error(const dbx_future *f) { return f->error; }
dbx_bytes dbx_result(const dbx_future *f) { return f->result; }

static void settle(dbx_future *f, dbx_bytes result, char *error, char *details) {
	f->resolved = true;
	f->open = false;
	f->result = result;
	f->error = error;
	f->details = details;
	if (f->seq < o.nfutures)
		o.futures[f->seq] = NULL;
}

/* cancellable says whether f's operation can be cancelled: it is open and
 * not a raise (delivered with the commit that records it, whose outcome
 * comes whatever happens). */
static bool cancellable(const dbx_future *f) { return f->open && f->kind != CMD_RAISE; }

/* cancel_command emits the command that cancels f's operation and fails f
 * with error. */
static void cancel_command(dbx_future *f, const char *error) {
	uint64_t kind = f->kind == CMD_SCHEDULE_ACTIVITY ? CMD_CANCEL_ACTIVITY
	                : f->kind == CMD_START_CHILD     ? CMD_CANCEL_CHILD
	                : f->kind == CMD_START_TIMER     ? CMD_CANCEL_TIMER
	                                                 : CMD_CANCEL_WAIT;
	emit(&(wire_command){.kind = kind, .target = f->seq});
	settle(f, (dbx_bytes){0}, xstrndup(error, strlen(error)), NULL);
}

static const char canceled[] = "durabox: the operation was cancelled";

void dbx_cancel(dbx_ctx *ctx, dbx_future *f) {
	(void)ctx;
	if (!usable("dbx_cancel") || f == &never)
		return;
	/* A cancel the code made on an earlier run is on the tape; one of an
	 * operation that had ended by then is not, and is nothing now. */
	uint64_t h = fnv(0, &f->seq, sizeof f->seq);
	if (o.cursor < o.ntape && o.tape[o.cursor].kind == CMD_CANCEL_ACTIVITY && o.tape[o.cursor].hash == h) {
		o.cursor++;
		return;
	}
	if (!cancellable(f))
		return;
	if (o.cursor < o.ntape) {
		diverge("dbx_cancel");
		return;
	}
	/* Every cancel is one kind on the tape: its target tells them apart. */
	record(CMD_CANCEL_ACTIVITY, h, NULL);
	cancel_command(f, canceled);
}

static int select_first(dbx_ctx *ctx, dbx_future *const *fs, int n, bool cancel_rest) {
	if (!usable(cancel_rest ? "dbx_select" : "dbx_select_keep"))
		return -1;
	uint64_t h = fnv(0, &n, sizeof n);
	for (int i = 0; i < n; i++)
		h = fnv(h, &fs[i]->seq, sizeof fs[i]->seq);
	h = fnv(h, &cancel_rest, sizeof cancel_rest);
	int winner = -1;
	tape_entry *e = replayed(TAPE_SELECT, h, NULL);
	if (e)
		winner = (int)e->value;
	else if (o.ended)
		return -1;
	else {
		for (int i = 0; i < n && winner < 0; i++)
			if (fs[i]->resolved)
				winner = i;
		if (winner < 0)
			return -1;
		record(TAPE_SELECT, h, NULL)->value = winner;
	}
	for (int i = 0; cancel_rest && i < n; i++)
		if (i != winner)
			dbx_cancel(ctx, fs[i]);
	return winner;
}

int dbx_select(dbx_ctx *ctx, dbx_future *const *fs, int n) { return select_first(ctx, fs, n, true); }
int dbx_select_keep(dbx_ctx *ctx, dbx_future *const *fs, int n) { return select_first(ctx, fs, n, false); }

/* end_with emits the command that ends the execution. */
static void end_with(wire_command *c) {
	if (o.ended)
		return;
	o.ended = true;
	emit(c);
}

/* ending checks that the code ends where it ended before, if it did: it
 * never has, since nothing runs after the end, so the tape must be done. */
static dbx_step ending(wire_command *c, const char *call) {
	if (!usable(call))
		return DBX_DONE;
	if (o.cursor < o.ntape)
		diverge(call);
	else
		end_with(c);
	return DBX_DONE;
}

dbx_step dbx_complete(dbx_ctx *ctx, dbx_bytes output) {
	(void)ctx;
	output = or_null(output);
	if (!dbx_json_valid(output))
		return dbx_fail(ctx, "durabox: the orchestration's output is not JSON: %.*s", (int)(output.len > 200 ? 200 : output.len),
		                output.ptr);
	return ending(&(wire_command){.kind = CMD_COMPLETE, .output = output}, "dbx_complete");
}

dbx_step dbx_continue_as_new(dbx_ctx *ctx, dbx_bytes input) {
	(void)ctx;
	input = or_null(input);
	if (!dbx_json_valid(input))
		return dbx_fail(ctx, "durabox: the input to continue as new with is not JSON: %.*s",
		                (int)(input.len > 200 ? 200 : input.len), input.ptr);
	return ending(&(wire_command){.kind = CMD_CONTINUE_AS_NEW, .output = input}, "dbx_continue_as_new");
}

dbx_step dbx_fail(dbx_ctx *ctx, const char *fmt, ...) {
	(void)ctx;
	va_list ap;
	va_start(ap, fmt);
	char *msg = scratch_vfmt(fmt, ap);
	va_end(ap);
	return ending(&(wire_command){.kind = CMD_FAIL, .fail_message = msg}, "dbx_fail");
}

dbx_step dbx_return_future(dbx_ctx *ctx, const dbx_future *f) {
	if (!f->resolved)
		return dbx_fail(ctx, "durabox: dbx_return_future was given a future that has not resolved: DBX_AWAIT it first");
	if (!f->error)
		return dbx_complete(ctx, f->result);
	if (!usable("dbx_return_future"))
		return DBX_DONE;
	return ending(&(wire_command){.kind = CMD_FAIL, .fail_message = f->error, .fail_details = f->details}, "dbx_fail");
}

const char *dbx_instance_id(const dbx_ctx *ctx) {
	(void)ctx;
	return o.instance_id;
}

/* memo returns what the code read at this point on its first run: now,
 * that time; later, what it read then. */
static int64_t memo(uint64_t kind, int64_t now) {
	if (o.querying || o.ended || !o.running)
		return now;
	tape_entry *e = replayed(kind, 0, NULL);
	if (e)
		return e->value;
	if (o.ended)
		return now;
	record(kind, 0, NULL)->value = now;
	return now;
}

int64_t dbx_now(dbx_ctx *ctx) {
	(void)ctx;
	return memo(TAPE_NOW, o.now);
}

bool dbx_is_replaying(const dbx_ctx *ctx) {
	(void)ctx;
	return o.replaying;
}

const char *dbx_cancelled(dbx_ctx *ctx) {
	(void)ctx;
	return memo(TAPE_CANCELLED, o.cancelled != NULL) ? o.cancelled : NULL;
}

void dbx_set_custom_status(dbx_ctx *ctx, const char *text) {
	(void)ctx;
	wire_command c = {.kind = CMD_SET_CUSTOM_STATUS, .name = text};
	if (!usable("dbx_set_custom_status"))
		return;
	uint64_t h = hash_command(&c);
	if (replayed(c.kind, h, NULL) || o.ended)
		return;
	record(c.kind, h, NULL);
	emit(&c);
}

__attribute__((import_module("durabox"), import_name("patched"))) int32_t dbx__host_patched(const char *change, size_t len);

bool dbx_patched(dbx_ctx *ctx, const char *change) {
	(void)ctx;
	if (!usable("dbx_patched"))
		return false;
	for (size_t i = 0; i < o.npatches; i++) {
		patch_answer *p = &o.patches[i];
		if (strcmp(p->change, change) == 0) {
			/* Asked on an earlier run: its first question of the change
			 * is where the Patch command, if any, is on the tape. */
			if (p->taken && p->run != o.runs)
				replayed(CMD_PATCH, hash_command(&(wire_command){.kind = CMD_PATCH, .name = change}), change);
			p->run = o.runs;
			return p->taken;
		}
	}
	bool taken = dbx__host_patched(change, strlen(change)) == 1;
	o.patches = xrealloc(o.patches, (o.npatches + 1) * sizeof *o.patches);
	o.patches[o.npatches++] = (patch_answer){xstrndup(change, strlen(change)), taken, o.runs};
	if (taken) {
		wire_command c = {.kind = CMD_PATCH, .name = change};
		if (o.cursor < o.ntape)
			diverge(describe(CMD_PATCH, change));
		else {
			record(CMD_PATCH, hash_command(&c), change);
			emit(&c);
		}
	}
	return taken;
}

void dbx_log(dbx_ctx *ctx, const char *fmt, ...) {
	(void)ctx;
	/* The lines of a run are numbered; only those past the last run's are
	 * new. The same work whatever replaying says: the host drops what a
	 * replay writes. */
	if (o.querying || o.log_index++ < o.logs)
		return;
	o.logs = o.log_index;
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void dbx_handle_query(dbx_ctx *ctx, const char *name, dbx_query_fn fn, void *data) {
	(void)ctx;
	if (!usable("dbx_handle_query"))
		return;
	size_t i = 0;
	while (i < o.nqueries && strcmp(o.queries[i].name, name) < 0)
		i++;
	if (i < o.nqueries && strcmp(o.queries[i].name, name) == 0) {
		o.queries[i].fn = fn, o.queries[i].data = data;
		return;
	}
	o.queries = xrealloc(o.queries, (o.nqueries + 1) * sizeof *o.queries);
	memmove(o.queries + i + 1, o.queries + i, (o.nqueries - i) * sizeof *o.queries);
	o.queries[i] = (query_handler){xstrndup(name, strlen(name)), fn, data};
	o.nqueries++;
}

static dbx_bytes keep(dbx_bytes b) {
	uint8_t *p = xmalloc(b.len);
	if (b.len)
		memcpy(p, b.ptr, b.len);
	return (dbx_bytes){p, b.len};
}

static char *keep_str(dbx_bytes b) { return xstrndup((const char *)b.ptr, b.len); }

/* cancel_instance handles the instance's cancellation: every open
 * operation is cancelled, in seq order, and fails with the reason. */
static void cancel_instance(dbx_bytes reason) {
	if (o.cancelled)
		return;
	o.cancelled = keep_str(reason);
	const char *error = reason.len ? dbx_fmt("durabox: the instance was cancelled: %s", o.cancelled) : "durabox: the instance was cancelled";
	for (size_t seq = 1; seq < o.nfutures; seq++)
		if (o.futures[seq] && cancellable(o.futures[seq]))
			cancel_command(o.futures[seq], error);
}

static void resolve(const wire_job *j) {
	dbx_future *f = j->seq < o.nfutures ? o.futures[j->seq] : NULL;
	if (!f || !f->open)
		return; /* none, or cancelled: the host sends no such job */
	if (!j->failure.present) {
		settle(f, keep(j->result), NULL, NULL);
		return;
	}
	/* The messages of the Go SDK's ActivityError, ChildError and
	 * RaiseError. */
	dbx_bytes m = j->failure.message;
	const char *error = f->kind == CMD_RAISE ? dbx_fmt("%.*s", (int)m.len, m.ptr)
	                    : f->kind == CMD_START_CHILD
	                        ? dbx_fmt("child orchestration \"%s\" failed: %.*s", f->name, (int)m.len, m.ptr)
	                        : dbx_fmt("activity \"%s\" failed: %.*s", f->name, (int)m.len, m.ptr);
	settle(f, keep(j->result), xstrndup(error, strlen(error)), keep_str(j->failure.details));
}


static void start(const wire_job *j) {
	if (o.started)
		return;
	o.started = true;
	o.instance_id = keep_str(j->instance_id);
	o.input = keep(or_null(j->input));
	char *name = keep_str(j->name);
	const char *registered;
	o.fn = lookup_orchestration(name, &registered);
	o.fn_name = name;
	if (!o.fn)
		end_with(&(wire_command){.kind = CMD_FAIL,
		                         .fail_message = dbx_fmt("durabox: this module registers no orchestration \"%s\" (it registers %s)",
		                                                 name, registered)});
}

/* run runs the orchestration function from its first line. */
static void run(void) {
	if (!o.fn || o.ended)
		return;
	sched_yield(); /* ABI.md: every module imports it; a run is a step */
	o.cursor = 0;
	o.log_index = 0;
	o.runs++;
	o.running = true;
	dbx_step s = o.fn(&o.ctx, o.input);
	o.running = false;
	if (o.ended)
		return;
	if (s == DBX_DONE)
		end_with(&(wire_command){.kind = CMD_FAIL,
		                         .fail_message = dbx_fmt("durabox: orchestration \"%s\" returned DBX_DONE without ending: return "
		                                                 "dbx_complete, dbx_fail or dbx_continue_as_new",
		                                                 o.fn_name)});
	else if (o.cursor < o.ntape)
		diverge("return DBX_BLOCKED");
}

static dbx_bytes activate(const wire_activation *a) {
	o.commands.len = 0;
	o.now = a->time;
	o.replaying = a->replaying;
	for (size_t i = 0; i < a->njobs; i++) {
		const wire_job *j = &a->jobs[i];
		switch (j->kind) {
		case JOB_START:
			start(j);
			break;
		case JOB_RESOLVE_ACTIVITY:
		case JOB_FIRE_TIMER:
		case JOB_RESOLVE_EVENT:
		case JOB_RESOLVE_CHILD:
		case JOB_RESOLVE_RAISE:
			resolve(j);
			break;
		case JOB_CANCEL:
			cancel_instance(j->name);
			break;
		}
	}
	run();
	return buf_bytes(&o.commands);
}

/* query runs the handler of the query q names, if the instance registered
 * one, and writes the QueryResult, encoded, to out. */
static void query(const wire_query_request *q, buf *out, dbx_reply *r) {
	char *name = dbx_fmt("%.*s", (int)q->name.len, q->name.ptr);
	reply_init(r);
	size_t i = 0;
	while (i < o.nqueries && strcmp(o.queries[i].name, name) != 0)
		i++;
	if (i == o.nqueries)
		reply_failf(r, "durabox: the instance handles no query \"%s\"", name);
	else {
		o.querying = name;
		o.misuse = NULL;
		o.queries[i].fn(r, or_null(q->input), o.queries[i].data);
		if (o.misuse)
			reply_failf(r,
			            "durabox: the handler of query \"%s\" called %s: a query only reads the orchestration's state, "
			            "and may not use its context or futures (nothing was scheduled; the instance goes on as before)",
			            name, o.misuse);
		o.querying = NULL;
	}
	out->len = 0;
	reply_encode(out, r, 1, 2);
	for (size_t k = 0; k < o.nqueries; k++)
		wire_str(out, 3, o.queries[k].name);
}
