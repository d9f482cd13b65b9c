/*
 * hello is the smallest Durabox module in C, the twin of
 * examples/wasm/hello: the orchestration Greeting calls the activity
 * SayHello with its input and returns the greeting.
 */
#include "durabox.h"

/* greeting greets its input through the SayHello activity. */
static dbx_step greeting(dbx_ctx *ctx, dbx_bytes name) {
	dbx_future *hello = dbx_activity(ctx, "SayHello", name);
	DBX_AWAIT(hello);
	return dbx_return_future(ctx, hello);
}

/* say_hello returns a greeting for its input, a JSON string. */
static void say_hello(dbx_reply *r, dbx_bytes input) {
	char *name;
	if (dbx_json_string(input, &name) != 0) {
		dbx_reply_fail(r, "the input is not a JSON string");
		return;
	}
	dbx_reply_string(r, dbx_fmt("Hello, %s!", name));
}

void dbx_main(void) {
	dbx_register_orchestration("Greeting", greeting);
	dbx_register_activity("SayHello", say_hello);
}
