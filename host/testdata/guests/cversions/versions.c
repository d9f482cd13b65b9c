/*
 * versions is the C twin of the Go test guest host/testdata/guests/versions,
 * built in several versions (-DVERSION=2), for upgrades and replays of C
 * modules.
 *
 * Flow waits for the event "go", calls the activity Step, waits for "go"
 * again, and completes with what ran each part. The versions differ after
 * the first wait: v1 calls Step("a"), v2 calls Step("b"), and v3 asks
 * whether it is patched ("step-b") and calls Step("b") if so, Step("a")
 * otherwise.
 */
#include "durabox.h"

#ifndef VERSION
#define VERSION 1
#endif

static dbx_step flow(dbx_ctx *ctx, dbx_bytes input) {
	(void)input;
	dbx_future *first = dbx_wait_event(ctx, "go");
	DBX_TRY(ctx, first);
	dbx_log(ctx, "the first go came (v%d)", VERSION);
	const char *arg = VERSION == 2 ? "b" : "a";
	if (VERSION == 3 && dbx_patched(ctx, "step-b"))
		arg = "b";
	dbx_future *step = dbx_activity(ctx, "Step", dbx_quote(arg));
	DBX_TRY(ctx, step);
	dbx_set_custom_status(ctx, "waiting for the second go");
	dbx_future *second = dbx_wait_event(ctx, "go");
	DBX_TRY(ctx, second);
	char *ran;
	if (dbx_json_string(dbx_result(step), &ran) != 0)
		return dbx_fail(ctx, "Step returned %.*s, not a string", (int)dbx_result(step).len, (const char *)dbx_result(step).ptr);
	return dbx_complete(ctx, dbx_quote(dbx_fmt("%s, finished by v%d", ran, VERSION)));
}

static void step(dbx_reply *r, dbx_bytes input) {
	char *arg;
	if (dbx_json_string(input, &arg) != 0) {
		dbx_reply_fail(r, "the input is not a JSON string");
		return;
	}
	dbx_reply_string(r, dbx_fmt("step %s by v%d", arg, VERSION));
}

void dbx_main(void) {
	dbx_register_orchestration("Flow", flow);
	dbx_register_activity("Step", step);
}
