/*
 * exports.c: the module's side of the ABI (abi/ABI.md, "Exports"): the
 * registry dbx_main fills, the manifest, the buffer the host writes each
 * request into, and the exports that decode a request, run what it asks
 * and return the encoded answer. A request that does not decode traps,
 * with the reason on stderr: only a host that breaks the ABI sends one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct {
	const char *name;
	void (*fn)(void);
} registered;

static struct {
	registered *items;
	size_t n;
} orchestrations, activities;

/* add registers fn under name, in name order (as Go's sort.Strings sorts).
 * A name a host refuses goes into the manifest as it is: the host's check
 * at deploy (and durabox check) names it and the rule it breaks. */
static void add(const char *what, size_t *n, registered **items, const char *name, void (*fn)(void)) {
	if (!name)
		die("dbx_register_%s was given no name", what);
	size_t i = 0;
	while (i < *n && strcmp((*items)[i].name, name) < 0)
		i++;
	if (i < *n && strcmp((*items)[i].name, name) == 0)
		die("%s \"%s\" is registered twice", what, name);
	*items = xrealloc(*items, (*n + 1) * sizeof **items);
	memmove(*items + i + 1, *items + i, (*n - i) * sizeof **items);
	(*items)[i] = (registered){name, fn};
	(*n)++;
}

void dbx_register_orchestration(const char *name, dbx_orchestration_fn fn) {
	add("orchestration", &orchestrations.n, &orchestrations.items, name, (void (*)(void))fn);
}

void dbx_register_activity(const char *name, dbx_activity_fn fn) {
	add("activity", &activities.n, &activities.items, name, (void (*)(void))fn);
}

static void (*find(const registered *items, size_t n, const char *name))(void) {
	for (size_t i = 0; i < n; i++)
		if (strcmp(items[i].name, name) == 0)
			return items[i].fn;
	return NULL;
}

static const char *names_list(const void *items, size_t n, size_t size) {
	static buf b;
	b.len = 0;
	buf_byte(&b, '[');
	for (size_t i = 0; i < n; i++) {
		const char *name = *(const char *const *)((const uint8_t *)items + i * size);
		if (i)
			buf_byte(&b, ' ');
		buf_put(&b, name, strlen(name));
	}
	buf_byte(&b, ']');
	return dbx_fmt("%.*s", (int)b.len, (const char *)b.ptr);
}

static dbx_orchestration_fn lookup_orchestration(const char *name, const char **registered) {
	*registered = names_list(orchestrations.items, orchestrations.n, sizeof *orchestrations.items);
	return (dbx_orchestration_fn)find(orchestrations.items, orchestrations.n, name);
}

/* dbx_reply is an activity's or a query's answer. */
struct dbx_reply {
	buf output;
	char *failure;
	const char *name, *instance_id;
	uint32_t attempt;
};

static void reply_init(dbx_reply *r) {
	r->output.len = 0;
	r->failure = NULL;
}

static void reply_vfail(dbx_reply *r, const char *fmt, va_list ap) {
	if (!r->failure)
		r->failure = scratch_vfmt(fmt, ap);
}

static void reply_failf(dbx_reply *r, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	reply_vfail(r, fmt, ap);
	va_end(ap);
}

void dbx_reply_fail(dbx_reply *r, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	reply_vfail(r, fmt, ap);
	va_end(ap);
}

void dbx_reply_json(dbx_reply *r, dbx_bytes json) {
	if (!dbx_json_valid(json)) {
		reply_failf(r, "durabox: the answer is not JSON: %.*s", (int)(json.len > 200 ? 200 : json.len), json.ptr);
		return;
	}
	r->output.len = 0;
	buf_put(&r->output, json.ptr, json.len);
}

void dbx_reply_string(dbx_reply *r, const char *s) {
	r->output.len = 0;
	json_quote(&r->output, s, strlen(s));
}

const char *dbx_reply_name(const dbx_reply *r) { return r->name; }
const char *dbx_reply_instance_id(const dbx_reply *r) { return r->instance_id; }
uint32_t dbx_reply_attempt(const dbx_reply *r) { return r->attempt; }

/* reply_encode appends r as an ActivityResult's or a QueryResult's output
 * and failure fields: a failure, or the output (null when none). */
static void reply_encode(buf *out, dbx_reply *r, uint32_t output_field, uint32_t failure_field) {
	if (r->failure)
		wire_encode_failure(out, failure_field, r->failure, NULL);
	else
		wire_bytes(out, output_field, r->output.len ? buf_bytes(&r->output) : dbx_str("null"));
}

/* The request buffer (durabox_alloc) and the last answer, which stays
 * valid until the host's next call. */
static uint8_t *request;
static size_t request_cap, request_len;
static buf answer;
static dbx_reply reply;

static uint64_t region(dbx_bytes b) { return b.len ? (uint64_t)(uintptr_t)b.ptr << 32 | b.len : 0; }

/* take returns the request the host wrote, after checking it is in the
 * buffer durabox_alloc gave it; and begins the call: the scratch memory of
 * the last one is freed. */
static dbx_bytes take(int32_t addr, int32_t len, const char *what) {
	scratch_reset();
	if (len < 0 || (size_t)len > request_len || (uintptr_t)addr != (uintptr_t)request)
		die("the host passed %s a region (%d, %d) it did not allocate with durabox_alloc", what, addr, len);
	return (dbx_bytes){request, (size_t)len};
}

__attribute__((export_name("durabox_abi_version"))) int32_t durabox_abi_version(void) { return 1; }

__attribute__((export_name("durabox_alloc"))) int32_t durabox_alloc(int32_t size) {
	if (size < 0)
		die("durabox_alloc was asked for %d bytes", size);
	if ((size_t)size > request_cap) {
		free(request);
		request = xmalloc((size_t)size);
		request_cap = (size_t)size;
	}
	request_len = (size_t)size;
	return (int32_t)(uintptr_t)request;
}

__attribute__((export_name("durabox_describe"))) int64_t durabox_describe(void) {
	scratch_reset();
	answer.len = 0;
	wire_str(&answer, 1, "durabox-c/0.1");
	for (size_t i = 0; i < orchestrations.n; i++)
		wire_str(&answer, 2, orchestrations.items[i].name);
	for (size_t i = 0; i < activities.n; i++)
		wire_str(&answer, 3, activities.items[i].name);
	wire_uint(&answer, 4, 1); /* updates: the SDK delivers them (orchestration.c) */
	return (int64_t)region(buf_bytes(&answer));
}

__attribute__((export_name("durabox_activate"))) int64_t durabox_activate(int32_t addr, int32_t len) {
	wire_activation a;
	const char *err = wire_decode_activation(take(addr, len, "durabox_activate"), &a);
	if (err)
		die("the host sent an activation that does not decode: %s", err);
	dbx_bytes cmds = activate(&a);
	return (int64_t)region(cmds);
}

__attribute__((export_name("durabox_activity"))) int64_t durabox_activity(int32_t addr, int32_t len) {
	wire_activity_request q;
	const char *err = wire_decode_activity_request(take(addr, len, "durabox_activity"), &q);
	if (err)
		die("the host sent an activity request that does not decode: %s", err);
	dbx_reply *r = &reply;
	reply_init(r);
	r->name = dbx_fmt("%.*s", (int)q.name.len, q.name.ptr);
	r->instance_id = dbx_fmt("%.*s", (int)q.instance_id.len, q.instance_id.ptr);
	r->attempt = q.attempt > UINT32_MAX ? UINT32_MAX : (uint32_t)q.attempt;
	dbx_activity_fn fn = (dbx_activity_fn)find(activities.items, activities.n, r->name);
	if (!fn)
		reply_failf(r, "this module registers no activity \"%s\" (it registers %s)", r->name,
		            names_list(activities.items, activities.n, sizeof *activities.items));
	else
		fn(r, q.input.len ? q.input : dbx_str("null"));
	answer.len = 0;
	reply_encode(&answer, r, 1, 2);
	return (int64_t)region(buf_bytes(&answer));
}

__attribute__((export_name("durabox_query"))) int64_t durabox_query(int32_t addr, int32_t len) {
	wire_query_request q;
	const char *err = wire_decode_query_request(take(addr, len, "durabox_query"), &q);
	if (err)
		die("the host sent a query that does not decode: %s", err);
	query(&q, &answer, &reply);
	return (int64_t)region(buf_bytes(&answer));
}

/* The module's start (_initialize) runs the author's registrations. */
__attribute__((constructor)) static void init(void) {
	dbx_main();
	if (orchestrations.n + activities.n == 0)
		die("dbx_main registered nothing: call dbx_register_orchestration or dbx_register_activity in it");
}
