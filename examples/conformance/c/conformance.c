/*
 * conformance is the C SDK's conformance module (docs/conformance.md): the
 * orchestrations and activities the guest conformance kit drives, each as
 * the specification describes it.
 *
 *     make examples/conformance/c/conformance.wasm
 *     durabox conformance examples/conformance/c/conformance.wasm
 */
#include <string.h>

#include "durabox.h"

/* ---- Activities ---- */

static void echo(dbx_reply *r, dbx_bytes input) { dbx_reply_json(r, input); }

static void boom(dbx_reply *r, dbx_bytes input) {
	char *s;
	if (dbx_json_string(input, &s) != 0)
		s = "(not a string)";
	dbx_reply_fail(r, "boom: %s", s);
}

/* ---- Helpers ---- */

/* join returns the results of n futures, resolved, as a JSON array. */
static dbx_bytes join(dbx_future *const *fs, long n) {
	char *out = "[";
	for (long i = 0; i < n; i++) {
		dbx_bytes r = dbx_result(fs[i]);
		out = dbx_fmt("%s%s%.*s", out, i ? "," : "", (int)r.len, (const char *)r.ptr);
	}
	return dbx_str(dbx_fmt("%s]", out));
}

static dbx_bytes integer(int64_t n) { return dbx_str(dbx_fmt("%lld", (long long)n)); }

/* ---- Orchestrations ---- */

static dbx_step sequence(dbx_ctx *ctx, dbx_bytes input) {
	dbx_bytes *items;
	long n = dbx_json_array(input, &items);
	if (n < 0)
		return dbx_fail(ctx, "Sequence: the input is not an array");
	dbx_future **results = dbx_alloc((size_t)n * sizeof *results);
	for (long i = 0; i < n; i++) {
		results[i] = dbx_activity(ctx, "Echo", items[i]);
		DBX_TRY(ctx, results[i]);
	}
	return dbx_complete(ctx, join(results, n));
}

static dbx_step fan_out(dbx_ctx *ctx, dbx_bytes input) {
	int64_t n;
	if (dbx_json_int(input, &n) != 0 || n < 0 || n > 10000)
		return dbx_fail(ctx, "FanOut: the input is not a count");
	dbx_future **results = dbx_alloc((size_t)n * sizeof *results);
	for (int64_t i = 0; i < n; i++)
		results[i] = dbx_activity(ctx, "Echo", integer(i));
	for (int64_t i = 0; i < n; i++)
		DBX_TRY(ctx, results[i]);
	return dbx_complete(ctx, join(results, (long)n));
}

static dbx_step fails(dbx_ctx *ctx, dbx_bytes input) {
	dbx_future *f = dbx_activity(ctx, "Boom", input);
	DBX_AWAIT(f);
	return dbx_return_future(ctx, f);
}

static dbx_step timer(dbx_ctx *ctx, dbx_bytes input) {
	int64_t seconds;
	if (dbx_json_int(input, &seconds) != 0)
		return dbx_fail(ctx, "Timer: the input is not a number of seconds");
	int64_t before = dbx_now(ctx);
	dbx_future *t = dbx_timer(ctx, seconds * 1000000000LL);
	DBX_TRY(ctx, t);
	return dbx_complete(ctx, integer((dbx_now(ctx) - before) / 1000000000LL));
}

static const int64_t hour = 3600 * 1000000000LL;

static dbx_step race(dbx_ctx *ctx, dbx_bytes input) {
	(void)input;
	dbx_future *fs[] = {dbx_activity(ctx, "Echo", dbx_quote("fast")), dbx_timer(ctx, hour)};
	int won;
	DBX_SELECT(won, ctx, fs, 2);
	if (won == 1)
		return dbx_complete(ctx, dbx_quote("timer"));
	return dbx_return_future(ctx, fs[0]);
}

static dbx_step events(dbx_ctx *ctx, dbx_bytes input) {
	(void)input;
	dbx_future *fs[] = {dbx_wait_event(ctx, "first"), dbx_wait_event_persistent(ctx, "second")};
	DBX_TRY(ctx, fs[0]);
	DBX_TRY(ctx, fs[1]);
	return dbx_complete(ctx, join(fs, 2));
}

static dbx_step waiter(dbx_ctx *ctx, dbx_bytes input) {
	(void)input;
	dbx_future *go = dbx_wait_event(ctx, "go");
	DBX_AWAIT(go);
	return dbx_return_future(ctx, go);
}

static dbx_step cancellable(dbx_ctx *ctx, dbx_bytes input) {
	(void)input;
	dbx_future *never = dbx_activity(ctx, "Echo", dbx_quote("never"));
	dbx_timer(ctx, hour);
	dbx_wait_event(ctx, "never");
	dbx_wait_event_persistent(ctx, "never-persistent");
	dbx_child(ctx, "Waiter", dbx_str("null"), NULL);
	DBX_AWAIT(never);
	return dbx_return_future(ctx, never);
}

static dbx_step parent(dbx_ctx *ctx, dbx_bytes input) {
	dbx_future *child = dbx_child(ctx, "Sequence", dbx_str(dbx_fmt("[%.*s]", (int)input.len, (const char *)input.ptr)), NULL);
	dbx_child_detached(ctx, "Waiter", dbx_str("null"), dbx_fmt("%s-waiter", dbx_instance_id(ctx)));
	DBX_AWAIT(child);
	return dbx_return_future(ctx, child);
}

static dbx_step countdown(dbx_ctx *ctx, dbx_bytes input) {
	int64_t n;
	if (dbx_json_int(input, &n) != 0)
		return dbx_fail(ctx, "Countdown: the input is not a number");
	dbx_future *echoed = dbx_activity(ctx, "Echo", input);
	DBX_TRY(ctx, echoed);
	if (n > 0)
		return dbx_continue_as_new(ctx, integer(n - 1));
	return dbx_complete(ctx, dbx_quote("liftoff"));
}

static dbx_step status(dbx_ctx *ctx, dbx_bytes input) {
	(void)input;
	dbx_set_custom_status(ctx, "working");
	bool patched = dbx_patched(ctx, "kit-change");
	dbx_future *echoed = dbx_activity(ctx, "Echo", dbx_quote(patched ? "patched" : "unpatched"));
	DBX_TRY(ctx, echoed);
	dbx_set_custom_status(ctx, "done");
	return dbx_return_future(ctx, echoed);
}

static dbx_step raiser(dbx_ctx *ctx, dbx_bytes input) {
	char *target;
	if (dbx_json_string(input, &target) != 0)
		return dbx_fail(ctx, "Raiser: the input is not an instance id");
	dbx_future *raised = dbx_raise(ctx, target, "go", dbx_quote("raised"), false);
	DBX_AWAIT(raised);
	return dbx_complete(ctx, dbx_str(dbx_error(raised) ? "false" : "true"));
}

/* state is Queryable's state, JSON, which its query answers. */
static dbx_bytes state;

static void state_query(dbx_reply *r, dbx_bytes arg, void *data) {
	(void)arg, (void)data;
	dbx_reply_json(r, state);
}

static dbx_step queryable(dbx_ctx *ctx, dbx_bytes input) {
	(void)input;
	state = dbx_str("\"initial\"");
	dbx_handle_query(ctx, "state", state_query, NULL);
	dbx_future *set = dbx_wait_event(ctx, "set");
	DBX_TRY(ctx, set);
	state = dbx_result(set); /* a future's result lives as long as the instance */
	dbx_future *stop = dbx_wait_event(ctx, "stop");
	DBX_TRY(ctx, stop);
	return dbx_complete(ctx, state);
}

/* sum is Updatable's sum, which its update add grows. A handler runs
 * again until it answers: it adds to the sum once, as it answers. */
static int64_t sum;

static const char *add_validate(dbx_bytes arg, void *data) {
	(void)data;
	int64_t n;
	if (dbx_json_int(arg, &n) != 0)
		return "the argument is not a number";
	return n < 0 ? "a negative number" : NULL;
}

static dbx_step add(dbx_ctx *ctx, dbx_bytes arg, void *data) {
	(void)data;
	dbx_future *echo = dbx_activity(ctx, "Echo", arg);
	DBX_TRY(ctx, echo);
	int64_t echoed;
	if (dbx_json_int(dbx_result(echo), &echoed) != 0)
		return dbx_fail(ctx, "add: Echo answered no number");
	sum += echoed;
	return dbx_complete(ctx, integer(sum));
}

static dbx_step updatable(dbx_ctx *ctx, dbx_bytes input) {
	(void)input;
	dbx_handle_update(ctx, "add", add, add_validate, NULL);
	dbx_future *stop = dbx_wait_event(ctx, "stop");
	DBX_TRY(ctx, stop);
	return dbx_complete(ctx, integer(sum));
}

void dbx_main(void) {
	dbx_register_activity("Echo", echo);
	dbx_register_activity("Boom", boom);
	dbx_register_orchestration("Sequence", sequence);
	dbx_register_orchestration("FanOut", fan_out);
	dbx_register_orchestration("Fails", fails);
	dbx_register_orchestration("Timer", timer);
	dbx_register_orchestration("Race", race);
	dbx_register_orchestration("Events", events);
	dbx_register_orchestration("Waiter", waiter);
	dbx_register_orchestration("Cancellable", cancellable);
	dbx_register_orchestration("Parent", parent);
	dbx_register_orchestration("Countdown", countdown);
	dbx_register_orchestration("Status", status);
	dbx_register_orchestration("Raiser", raiser);
	dbx_register_orchestration("Queryable", queryable);
	dbx_register_orchestration("Updatable", updatable);
}
