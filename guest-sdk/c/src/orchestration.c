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
 *
 * An update's handler is a branch of its own (abi/ABI.md, "Updates"): it
 * too runs again from its first line after every activation, with a tape
 * of its own, until it answers; its commands take the instance's seqs. An
 * activation runs the orchestration function, then each handler that has
 * not answered, in the order their updates came, and does it all again
 * while a handler answered in the pass (so that what a handler changed by
 * then is seen by the orchestration in the same step).
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

/* handler is a query's or an update's handler, as registered. */
typedef struct {
	char *name;
	void (*fn)(void); /* a dbx_query_fn or a dbx_update_fn */
	dbx_validate_fn validate;
	void *data;
} handler;

/* branch is code that runs again from its first line after every
 * activation: the orchestration function, or the handler of an update. */
typedef struct {
	tape_entry *tape;
	size_t ntape, cursor;
	size_t logs, log_index;
	/* For an update's handler: */
	char *update_id, *update_name;
	dbx_update_fn fn;
	void *data;
	dbx_bytes arg;
	bool answered;
} branch;

typedef struct {
	char *change;
	bool taken;
	branch *owner; /* the branch whose tape holds the Patch */
	size_t run;    /* the last run of owner that asked */
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
	branch main;       /* the orchestration function's */
	branch *cur;       /* the branch that runs */
	branch **updates;  /* the handlers of the updates accepted, in order */
	size_t nupdates, answered;
	buf commands; /* the activation's, encoded */
	size_t runs;  /* how many runs began, of any branch */
	handler *queries, *update_handlers;
	size_t nqueries, nupdate_handlers;
	patch_answer *patches;
	size_t npatches;
	/* querying is the name of the query whose handler (or of the update
	 * whose validator) runs; misuse what it called that it may not. */
	const char *querying, *misuse;
	bool refused; /* the activation refused an update */
} o = {.cur = &o.main};

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
	branch *b = o.cur;
	const char *before = b->cursor < b->ntape ? b->tape[b->cursor].what : "nothing more";
	const char *who = b == &o.main ? "the orchestration" : dbx_fmt("the handler of update \"%s\"", b->update_name);
	char *msg = dbx_fmt("durabox: %s did not repeat itself: run again from the start, "
	                    "its call %zu was %s where it was %s before; an orchestration must decide only from its "
	                    "input and its futures' results (race futures with dbx_select, not dbx_ready)",
	                    who, b->cursor + 1, now, before);
	end_with(&(wire_command){.kind = CMD_FAIL, .fail_message = msg});
}

/* replayed returns the tape's next entry when the code asked for it on an
 * earlier run, after checking it is the same call; NULL when the code goes
 * further than before (and the caller records the call), or when the
 * instance ended on a divergence. */
static tape_entry *replayed(uint64_t kind, uint64_t hash, const char *name) {
	branch *b = o.cur;
	if (b->cursor >= b->ntape)
		return NULL;
	tape_entry *e = &b->tape[b->cursor];
	if (e->kind != kind || e->hash != hash) {
		diverge(describe(kind, name));
		return NULL;
	}
	b->cursor++;
	return e;
}

/* replaying_more says whether the running branch's tape holds more than
 * its code asked for yet in this run. */
static bool replaying_more(void) { return o.cur->cursor < o.cur->ntape; }

static tape_entry *record(uint64_t kind, uint64_t hash, const char *name) {
	branch *b = o.cur;
	if (b->ntape % 64 == 0)
		b->tape = xrealloc(b->tape, (b->ntape + 64) * sizeof *b->tape);
	tape_entry *e = &b->tape[b->ntape++];
	char *what = (char *)describe(kind, name);
	*e = (tape_entry){.kind = kind, .hash = hash, .what = xstrndup(what, strlen(what))};
	b->cursor = b->ntape;
	return e;
}

/* usable says whether the orchestration may act now: not while a query's
 * handler or an update's validator runs (which fails the query, or refuses
 * the update), nor after the end, nor in a handler after its answer. */
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
	return !o.ended && !o.cur->answered;
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
	branch *b = o.cur;
	if (b->cursor < b->ntape && b->tape[b->cursor].kind == CMD_CANCEL_ACTIVITY && b->tape[b->cursor].hash == h) {
		b->cursor++;
		return;
	}
	if (!cancellable(f))
		return;
	if (replaying_more()) {
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

/* answer ends the running update handler with c, the end the code asked
 * for: its output, or its failure, answers the update. */
static void answer_update(const wire_command *c) {
	branch *b = o.cur;
	wire_command a = {.kind = CMD_COMPLETE_UPDATE, .update_id = b->update_id};
	if (c->kind == CMD_COMPLETE)
		a.output = c->output;
	else if (c->kind == CMD_FAIL)
		a.fail_message = c->fail_message, a.fail_details = c->fail_details;
	else
		a.fail_message = dbx_fmt("durabox: the handler of update \"%s\" called dbx_continue_as_new, which only the "
		                         "orchestration function may: a handler answers with dbx_complete, dbx_fail or "
		                         "dbx_return_future",
		                         b->update_name);
	b->answered = true;
	o.answered++;
	emit(&a);
}

/* ending checks that the code ends where it ended before, if it did: it
 * never has, since nothing runs after the end, so the tape must be done.
 * In an update's handler, the end answers the update. */
static dbx_step ending(wire_command *c, const char *call) {
	if (!usable(call))
		return DBX_DONE;
	if (replaying_more())
		diverge(call);
	else if (o.cur != &o.main)
		answer_update(c);
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
			/* Asked on an earlier run: its owner's first question of
			 * the change is where the Patch command, if any, is on
			 * its tape. */
			if (p->owner != o.cur)
				return p->taken;
			if (p->taken && p->run != o.runs)
				replayed(CMD_PATCH, hash_command(&(wire_command){.kind = CMD_PATCH, .name = change}), change);
			p->run = o.runs;
			return p->taken;
		}
	}
	bool taken = dbx__host_patched(change, strlen(change)) == 1;
	o.patches = xrealloc(o.patches, (o.npatches + 1) * sizeof *o.patches);
	o.patches[o.npatches++] = (patch_answer){xstrndup(change, strlen(change)), taken, o.cur, o.runs};
	if (taken) {
		wire_command c = {.kind = CMD_PATCH, .name = change};
		if (replaying_more())
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
	if (o.querying || o.cur->log_index++ < o.cur->logs)
		return;
	o.cur->logs = o.cur->log_index;
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* set_handler registers h in the list hs of n, in name order, replacing
 * the handler of the same name. */
static void set_handler(handler **hs, size_t *n, handler h) {
	size_t i = 0;
	while (i < *n && strcmp((*hs)[i].name, h.name) < 0)
		i++;
	if (i < *n && strcmp((*hs)[i].name, h.name) == 0) {
		h.name = (*hs)[i].name;
		(*hs)[i] = h;
		return;
	}
	*hs = xrealloc(*hs, (*n + 1) * sizeof **hs);
	memmove(*hs + i + 1, *hs + i, (*n - i) * sizeof **hs);
	h.name = xstrndup(h.name, strlen(h.name));
	(*hs)[i] = h;
	(*n)++;
}

static const handler *find_handler(const handler *hs, size_t n, const char *name) {
	for (size_t i = 0; i < n; i++)
		if (strcmp(hs[i].name, name) == 0)
			return &hs[i];
	return NULL;
}

void dbx_handle_query(dbx_ctx *ctx, const char *name, dbx_query_fn fn, void *data) {
	(void)ctx;
	if (usable("dbx_handle_query"))
		set_handler(&o.queries, &o.nqueries, (handler){.name = (char *)name, .fn = (void (*)(void))fn, .data = data});
}

void dbx_handle_update(dbx_ctx *ctx, const char *name, dbx_update_fn fn, dbx_validate_fn validate, void *data) {
	(void)ctx;
	if (usable("dbx_handle_update"))
		set_handler(&o.update_handlers, &o.nupdate_handlers,
		            (handler){.name = (char *)name, .fn = (void (*)(void))fn, .validate = validate, .data = data});
}

bool dbx_all_handlers_finished(const dbx_ctx *ctx) {
	(void)ctx;
	return o.answered == o.nupdates;
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

/* refuse answers the activation with the refusal of the update id, for
 * why, and nothing else: the host records nothing of the step, and runs it
 * again without the update on a fresh wasm instance. */
static void refuse(dbx_bytes id, const char *why) {
	o.refused = true;
	o.commands.len = 0;
	emit(&(wire_command){.kind = CMD_REJECT_UPDATE, .update_id = dbx_fmt("%.*s", (int)id.len, id.ptr), .fail_message = why});
}

/* update applies the delivery of an update: it refuses it when the
 * instance has no handler of its name, or the handler's validator refuses
 * it, and otherwise starts the handler, as a branch of its own. */
static void update(const wire_job *j) {
	char *name = dbx_fmt("%.*s", (int)j->name.len, j->name.ptr);
	dbx_bytes arg = or_null(j->input);
	const handler *h = o.ended ? NULL : find_handler(o.update_handlers, o.nupdate_handlers, name);
	if (!h) {
		refuse(j->update_id, dbx_fmt("durabox: the instance handles no update \"%s\" (it handles %s)", name,
		                             names_list(o.update_handlers, o.nupdate_handlers, sizeof *o.update_handlers)));
		return;
	}
	if (h->validate) {
		o.querying = name;
		o.misuse = NULL;
		const char *why = h->validate(arg, h->data);
		o.querying = NULL;
		if (o.misuse)
			why = dbx_fmt("durabox: the validator of update \"%s\" called %s: a validator only reads the "
			              "orchestration's state, and may not use its context or futures (the update was refused)",
			              name, o.misuse);
		if (why) {
			refuse(j->update_id, why);
			return;
		}
	}
	branch *b = xmalloc(sizeof *b);
	*b = (branch){.update_id = keep_str(j->update_id), .update_name = keep_str(j->name),
	              .fn = (dbx_update_fn)h->fn, .data = h->data, .arg = keep(arg)};
	o.updates = xrealloc(o.updates, (o.nupdates + 1) * sizeof *o.updates);
	o.updates[o.nupdates++] = b;
}

/* run_branch runs b's code from its first line. */
static void run_branch(branch *b) {
	o.cur = b;
	b->cursor = 0;
	b->log_index = 0;
	o.runs++;
	o.running = true;
	dbx_step s = b == &o.main ? o.fn(&o.ctx, o.input) : b->fn(&o.ctx, b->arg, b->data);
	o.running = false;
	if (o.ended || b->answered)
		return;
	if (s == DBX_DONE && b == &o.main)
		end_with(&(wire_command){.kind = CMD_FAIL,
		                         .fail_message = dbx_fmt("durabox: orchestration \"%s\" returned DBX_DONE without ending: return "
		                                                 "dbx_complete, dbx_fail or dbx_continue_as_new",
		                                                 o.fn_name)});
	else if (s == DBX_DONE)
		answer_update(&(wire_command){.kind = CMD_FAIL,
		                       .fail_message = dbx_fmt("durabox: the handler of update \"%s\" returned DBX_DONE without "
		                                               "answering: return dbx_complete, dbx_fail or dbx_return_future",
		                                               b->update_name)});
	else if (replaying_more())
		diverge("return DBX_BLOCKED");
}

/* run runs the orchestration function, then each update handler that has
 * not answered; again while a handler answered in the pass. */
static void run(void) {
	if (!o.fn || o.ended)
		return;
	sched_yield(); /* ABI.md: every module imports it; a run is a step */
	size_t answered;
	do {
		answered = o.answered;
		run_branch(&o.main);
		for (size_t i = 0; i < o.nupdates && !o.ended; i++)
			if (!o.updates[i]->answered)
				run_branch(o.updates[i]);
	} while (o.answered != answered && !o.ended);
}

static dbx_bytes activate(const wire_activation *a) {
	o.commands.len = 0;
	o.refused = false;
	o.now = a->time;
	o.replaying = a->replaying;
	for (size_t i = 0; i < a->njobs && !o.refused; i++) {
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
		case JOB_UPDATE:
			update(j);
			break;
		}
	}
	if (!o.refused)
		run();
	wire_uint(&o.commands, 2, o.nupdate_handlers > 0 && !o.ended);
	return buf_bytes(&o.commands);
}

/* query runs the handler of the query q names, if the instance registered
 * one, and writes the QueryResult, encoded, to out. */
static void query(const wire_query_request *q, buf *out, dbx_reply *r) {
	char *name = dbx_fmt("%.*s", (int)q->name.len, q->name.ptr);
	reply_init(r);
	const handler *h = find_handler(o.queries, o.nqueries, name);
	if (!h)
		reply_failf(r, "durabox: the instance handles no query \"%s\"", name);
	else {
		o.querying = name;
		o.misuse = NULL;
		((dbx_query_fn)h->fn)(r, or_null(q->input), h->data);
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
	for (size_t k = 0; k < o.nupdate_handlers; k++)
		wire_str(out, 4, o.update_handlers[k].name);
}
