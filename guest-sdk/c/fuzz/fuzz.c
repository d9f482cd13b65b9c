/*
 * fuzz.c: the SDK's decoders and its handling of jobs, under libFuzzer with
 * AddressSanitizer and UndefinedBehaviorSanitizer, natively (not in wasm,
 * where an out-of-bounds read inside the module's memory goes unseen). It
 * includes the whole SDK, so that it reaches its static functions, and
 * feeds each input to the wire decoders, the JSON readers and, when it
 * decodes as an activation, to the runtime, which runs a small
 * orchestration that uses every kind of operation, and an update handler. A malformed input must
 * be refused, never read past its end. durabox.mk's durabox-fuzz builds it;
 * internal/cguest runs it.
 */
#include "../durabox.c"

/* The host's import, which a native build has no host to give. */
int32_t dbx__host_patched(const char *change, size_t len) { return len % 2 == 0 && change[0] != 'x'; }

static const char *validate(dbx_bytes arg, void *data) {
	(void)data;
	int64_t n;
	return dbx_json_int(arg, &n) == 0 && n < 0 ? "negative" : NULL;
}

static dbx_step handle(dbx_ctx *ctx, dbx_bytes arg, void *data) {
	(void)data;
	dbx_future *t = dbx_timer(ctx, 5);
	DBX_TRY(ctx, t);
	return dbx_complete(ctx, arg);
}

static dbx_step everything(dbx_ctx *ctx, dbx_bytes input) {
	dbx_handle_update(ctx, "u", handle, validate, NULL);
	dbx_set_custom_status(ctx, "running");
	bool patched = dbx_patched(ctx, "change");
	dbx_future *fs[] = {dbx_activity(ctx, "A", input), dbx_timer(ctx, 1000), dbx_wait_event(ctx, "e"),
	                    dbx_wait_event_persistent(ctx, "p"), dbx_child(ctx, "C", dbx_str("null"), NULL),
	                    dbx_raise(ctx, "other", "go", dbx_str("1"), patched)};
	dbx_child_detached(ctx, "C", input, "kid");
	int64_t now = dbx_now(ctx);
	int won;
	DBX_SELECT(won, ctx, fs, 3);
	dbx_log(ctx, "won %d at %lld, cancelled: %s, handlers finished: %d", won, (long long)now,
	        dbx_cancelled(ctx) ? "yes" : "no", dbx_all_handlers_finished(ctx));
	DBX_AWAIT(fs[3]);
	dbx_cancel(ctx, fs[4]);
	if (dbx_select_keep(ctx, fs + 4, 2) < 0)
		return DBX_BLOCKED;
	if (dbx_error(fs[3]))
		return dbx_return_future(ctx, fs[3]);
	return dbx_continue_as_new(ctx, dbx_result(fs[3]));
}

/* Greeting too, the name the example activation starts: the state of the
 * instance outlives an input, so the first Start the fuzzer runs is the
 * one that counts, and it is the seed's. */
void dbx_main(void) {
	dbx_register_orchestration("Everything", everything);
	dbx_register_orchestration("Greeting", everything);
}

static void read_json(dbx_bytes b) {
	char *s;
	bool v;
	int64_t n;
	dbx_bytes field, *elems;
	dbx_json_valid(b);
	dbx_json_string(b, &s);
	dbx_json_bool(b, &v);
	dbx_json_int(b, &n);
	dbx_json_field(b, "a", &field);
	dbx_json_array(b, &elems);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	/* A copy of exactly size bytes, so that a read past the end is seen. */
	uint8_t *in = malloc(size ? size : 1);
	memcpy(in, data, size);
	dbx_bytes b = {in, size};
	scratch_reset();
	read_json(b);
	wire_activity_request q;
	wire_decode_activity_request(b, &q);
	wire_query_request qr;
	wire_decode_query_request(b, &qr);
	wire_activation a;
	if (!wire_decode_activation(b, &a)) {
		for (size_t i = 0; i < a.njobs; i++)
			read_json(a.jobs[i].result);
		activate(&a);
		buf out = {0};
		dbx_reply r = {0};
		query(&qr, &out, &r);
		free(out.ptr);
	}
	free(in);
	return 0;
}
