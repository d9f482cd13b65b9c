/*
 * fanout is a fan-out/fan-in in C, the twin of examples/wasm/fanout: one
 * activity per item, all started at once, joined in the order of the items
 * whatever order they finish in.
 */
#include <time.h>

#include "durabox.h"

/* word_count counts the words of every document at once and sums them. */
static dbx_step word_count(dbx_ctx *ctx, dbx_bytes input) {
	dbx_bytes *documents;
	long n = dbx_json_array(input, &documents);
	if (n < 0)
		return dbx_fail(ctx, "durabox: the input %.*s is not an array of documents", (int)input.len, (const char *)input.ptr);
	dbx_future **counts = dbx_alloc((size_t)n * sizeof *counts);
	for (long i = 0; i < n; i++) {
		char *document;
		if (dbx_json_string(documents[i], &document) != 0)
			return dbx_fail(ctx, "durabox: document %ld is not a string", i + 1);
		counts[i] = dbx_activity(ctx, "Count", dbx_quote(document));
	}
	/* All of them, then the first failure in the order of the documents. */
	for (long i = 0; i < n; i++)
		DBX_AWAIT(counts[i]);
	int64_t total = 0;
	for (long i = 0; i < n; i++) {
		int64_t c;
		if (dbx_error(counts[i]))
			return dbx_return_future(ctx, counts[i]);
		if (dbx_json_int(dbx_result(counts[i]), &c) != 0)
			return dbx_fail(ctx, "durabox: Count returned %.*s, not a number", (int)dbx_result(counts[i]).len,
			                (const char *)dbx_result(counts[i]).ptr);
		total += c;
	}
	return dbx_complete(ctx, dbx_str(dbx_fmt("%lld", (long long)total)));
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/* count counts a document's words; longer documents take longer. */
static void count(dbx_reply *r, dbx_bytes input) {
	char *document;
	if (dbx_json_string(input, &document) != 0) {
		dbx_reply_fail(r, "the input is not a JSON string");
		return;
	}
	long words = 0;
	for (char *p = document; *p; p++)
		words += !is_space(*p) && (p == document || is_space(p[-1]));
	nanosleep(&(struct timespec){.tv_sec = words / 1000, .tv_nsec = words % 1000 * 1000000L}, NULL);
	dbx_reply_json(r, dbx_str(dbx_fmt("%ld", words)));
}

void dbx_main(void) {
	dbx_register_orchestration("WordCount", word_count);
	dbx_register_activity("Count", count);
}
