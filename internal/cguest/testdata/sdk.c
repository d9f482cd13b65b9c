/*
 * sdk.c: orchestrations that hold the C SDK to what its guide promises
 * where a mistake of the author's, or a question asked twice, is involved
 * (sdk_test.go runs them).
 */
#include <string.h>

#include "durabox.h"

static void echo(dbx_reply *r, dbx_bytes input) { dbx_reply_json(r, input); }

/* runs counts the runs of Diverges: a static variable that changes what the
 * code does on its second run, which the SDK must catch. */
static int runs;

static dbx_step diverges(dbx_ctx *ctx, dbx_bytes input) {
	(void)input;
	dbx_future *f = dbx_activity(ctx, ++runs == 1 ? "A" : "B", dbx_str("1"));
	DBX_AWAIT(f);
	return dbx_return_future(ctx, f);
}

/* patched_twice asks about one change at two places of each run. */
static dbx_step patched_twice(dbx_ctx *ctx, dbx_bytes input) {
	(void)input;
	bool first = dbx_patched(ctx, "change");
	dbx_future *f = dbx_activity(ctx, "Echo", dbx_str(first ? "1" : "0"));
	DBX_TRY(ctx, f);
	bool again = dbx_patched(ctx, "change");
	dbx_future *g = dbx_activity(ctx, "Echo", dbx_str(again ? "1" : "0"));
	DBX_TRY(ctx, g);
	return dbx_complete(ctx, dbx_str(first && again ? "\"patched both times\"" : "\"not\""));
}

/* keep races a wait with a short timer without cancelling the loser,
 * cancels the wait itself, then calls an activity, so that later runs
 * replay both the choice and the cancel. */
static dbx_step keep(dbx_ctx *ctx, dbx_bytes input) {
	(void)input;
	dbx_future *fs[] = {dbx_wait_event(ctx, "never"), dbx_timer(ctx, 1000000)};
	int won = dbx_select_keep(ctx, fs, 2);
	if (won < 0)
		return DBX_BLOCKED;
	dbx_cancel(ctx, fs[0]);
	dbx_future *f = dbx_activity(ctx, "Echo", dbx_str(dbx_fmt("%d", won)));
	DBX_TRY(ctx, f);
	return dbx_complete(ctx, dbx_str(dbx_error(fs[0]) ? "\"the wait was cancelled\"" : "\"the wait was not\""));
}

static dbx_step done_without_ending(dbx_ctx *ctx, dbx_bytes input) {
	(void)ctx, (void)input;
	return DBX_DONE;
}

static dbx_ctx *kept;

static void misuse(dbx_reply *r, dbx_bytes arg, void *data) {
	(void)arg, (void)data;
	dbx_activity(kept, "Echo", dbx_str("1"));
	dbx_reply_string(r, "scheduled");
}

/* query_misuse keeps its context for a query handler that schedules an
 * activity through it, which must fail the query and nothing else. */
static dbx_step query_misuse(dbx_ctx *ctx, dbx_bytes input) {
	(void)input;
	kept = ctx;
	dbx_handle_query(ctx, "schedule", misuse, NULL);
	dbx_future *go = dbx_wait_event(ctx, "go");
	DBX_AWAIT(go);
	return dbx_complete(ctx, dbx_quote("went"));
}

static void boom(dbx_reply *r, dbx_bytes input) {
	(void)input;
	dbx_reply_fail(r, "boom");
}

/* The cart: Cart waits for updates alone until close, and then for the
 * handlers still running. add waits for the event go, so that close can
 * answer first; fail answers with an activity's failure; add's validator
 * uses the context when asked to, which must refuse the update. */
static bool closed;
static int64_t items;
static dbx_ctx *cart;

static const char *add_validate(dbx_bytes arg, void *data) {
	(void)data;
	char *s;
	if (dbx_json_string(arg, &s) != 0)
		return "the argument is not a string";
	if (s[0] == '\0')
		return "an empty item";
	if (strcmp(s, "misuse") == 0)
		dbx_timer(cart, 1);
	return NULL;
}

static dbx_step add(dbx_ctx *ctx, dbx_bytes arg, void *data) {
	(void)data;
	dbx_future *go = dbx_wait_event_persistent(ctx, "go");
	DBX_TRY(ctx, go);
	dbx_future *echo = dbx_activity(ctx, "Echo", arg);
	DBX_TRY(ctx, echo);
	items++;
	return dbx_complete(ctx, dbx_str(dbx_fmt("%lld", (long long)items)));
}

static dbx_step fail(dbx_ctx *ctx, dbx_bytes arg, void *data) {
	(void)data;
	dbx_future *f = dbx_activity(ctx, "Boom", arg);
	DBX_TRY(ctx, f);
	return dbx_complete(ctx, dbx_str("\"Boom did not fail\""));
}

static dbx_step close_cart(dbx_ctx *ctx, dbx_bytes arg, void *data) {
	(void)arg, (void)data;
	closed = true;
	return dbx_complete(ctx, dbx_str(dbx_fmt("%lld", (long long)items)));
}

static dbx_step cart_fn(dbx_ctx *ctx, dbx_bytes input) {
	(void)input;
	cart = ctx;
	dbx_handle_update(ctx, "add", add, add_validate, NULL);
	dbx_handle_update(ctx, "fail", fail, NULL, NULL);
	dbx_handle_update(ctx, "close", close_cart, NULL, NULL);
	if (!closed || !dbx_all_handlers_finished(ctx))
		return DBX_BLOCKED;
	return dbx_complete(ctx, dbx_str(dbx_fmt("%lld", (long long)items)));
}

void dbx_main(void) {
	dbx_register_activity("Echo", echo);
	dbx_register_activity("A", echo);
	dbx_register_activity("B", echo);
	dbx_register_orchestration("Diverges", diverges);
	dbx_register_orchestration("PatchedTwice", patched_twice);
	dbx_register_orchestration("DoneWithoutEnding", done_without_ending);
	dbx_register_orchestration("Keep", keep);
#ifdef BAD_NAME
	dbx_register_orchestration("bad\x01name", done_without_ending);
#endif
	dbx_register_orchestration("QueryMisuse", query_misuse);
	dbx_register_activity("Boom", boom);
	dbx_register_orchestration("Cart", cart_fn);
}
