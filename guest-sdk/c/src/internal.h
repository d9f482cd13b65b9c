/*
 * internal.h: what the SDK's files share and an author never uses: growable
 * buffers, scratch memory, JSON, and the ABI's wire format (abi/ABI.md,
 * "Encoding"). durabox.c includes it and every file of src/ into one
 * translation unit, so that all of this is static: the only symbols the
 * library adds to a module are the public dbx_ ones and the ABI's exports.
 */
#ifndef DURABOX_INTERNAL_H
#define DURABOX_INTERNAL_H

#include <stdarg.h>

#include "../durabox.h"

/* die writes "durabox: MESSAGE" to stderr and traps: what the SDK does with
 * a host that breaks the ABI, or a module that cannot run (out of memory, a
 * bad registration). A trap is defined behaviour in wasm: the host ends the
 * instance (or the deploy) with the message. */
static _Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void *xmalloc(size_t n);
static void *xrealloc(void *p, size_t n);
static char *xstrndup(const char *s, size_t n);

/* buf is a growable run of bytes on the heap. */
typedef struct {
	uint8_t *ptr;
	size_t len, cap;
} buf;

static void buf_put(buf *b, const void *p, size_t n);
static void buf_byte(buf *b, uint8_t c);
static inline dbx_bytes buf_bytes(const buf *b) { return (dbx_bytes){b->ptr, b->len}; }

/* Scratch memory: freed all at once when a call into the module ends. */
static void *scratch_alloc(size_t n);
static char *scratch_vfmt(const char *fmt, va_list ap);
static void scratch_reset(void);

/* JSON (json.c). json_quote appends s as a JSON string, escaped as Go's
 * encoding/json does; json_skip returns the end of the value at p (after
 * leading white space), or NULL when there is none. */
static void json_quote(buf *b, const char *s, size_t n);
static const uint8_t *json_skip(const uint8_t *p, const uint8_t *end, int depth);

/* The wire format. A reader walks a message's fields; every read is
 * bounds-checked and a malformed message is an error, never a read past the
 * end. */
enum { WIRE_VARINT = 0, WIRE_BYTES = 1 };

typedef struct {
	const uint8_t *p, *end;
} wire_reader;

typedef struct {
	uint32_t num;
	int type;
	uint64_t u;      /* the value of a varint field */
	dbx_bytes bytes; /* the value of a bytes field */
} wire_field;

/* wire_next reads the next field: 1 read, 0 at the end, -1 malformed. */
static int wire_next(wire_reader *r, wire_field *f);

static void wire_uint(buf *b, uint32_t num, uint64_t v);
static void wire_sint(buf *b, uint32_t num, int64_t v);
static void wire_bytes(buf *b, uint32_t num, dbx_bytes v);
static void wire_str(buf *b, uint32_t num, const char *s);

/* The messages the SDK reads. Their bytes point into the request. */
typedef struct {
	bool present;
	dbx_bytes message, details;
} wire_failure;

typedef struct {
	uint64_t kind, seq;
	dbx_bytes name, instance_id, input, result, update_id;
	wire_failure failure;
} wire_job;

typedef struct {
	int64_t time;
	bool replaying;
	size_t njobs;
	wire_job *jobs; /* in scratch memory */
} wire_activation;

typedef struct {
	dbx_bytes name, input, instance_id;
	uint64_t attempt;
} wire_activity_request;

typedef struct {
	dbx_bytes name, input;
} wire_query_request;

/* Each decoder returns NULL on success, else what was wrong. */
static const char *wire_decode_activation(dbx_bytes in, wire_activation *a);
static const char *wire_decode_activity_request(dbx_bytes in, wire_activity_request *r);
static const char *wire_decode_query_request(dbx_bytes in, wire_query_request *q);

/* Job kinds and command kinds (abi/ABI.md, "Job" and "Command"). */
enum {
	JOB_START = 1,
	JOB_RESOLVE_ACTIVITY = 2,
	JOB_FIRE_TIMER = 3,
	JOB_RESOLVE_EVENT = 4,
	JOB_RESOLVE_CHILD = 5,
	JOB_CANCEL = 6,
	JOB_RESOLVE_RAISE = 7,
	JOB_UPDATE = 8,
};

enum {
	CMD_SCHEDULE_ACTIVITY = 1,
	CMD_START_TIMER = 2,
	CMD_COMPLETE = 3,
	CMD_FAIL = 4,
	CMD_CANCEL_TIMER = 5,
	CMD_CANCEL_ACTIVITY = 6,
	CMD_WAIT_EVENT = 7,
	CMD_WAIT_EVENT_PERSISTENT = 8,
	CMD_CANCEL_WAIT = 9,
	CMD_CONTINUE_AS_NEW = 10,
	CMD_START_CHILD = 11,
	CMD_CANCEL_CHILD = 12,
	CMD_SET_CUSTOM_STATUS = 13,
	CMD_PATCH = 14,
	CMD_RAISE = 15,
	CMD_COMPLETE_UPDATE = 16,
	CMD_REJECT_UPDATE = 17,
};

/* A command, to encode: the fields a kind does not use stay zero. */
typedef struct {
	uint64_t kind, seq, target, timeout_ms;
	const char *name, *instance_id, *update_id;
	dbx_bytes input, output;
	int64_t delay;
	bool detached, persistent;
	const char *fail_message, *fail_details;
} wire_command;

static void wire_encode_command(buf *b, const wire_command *c);
static void wire_encode_failure(buf *b, uint32_t num, const char *message, const char *details);

/* Between the two halves of the runtime (exports.c, orchestration.c). */
static dbx_orchestration_fn lookup_orchestration(const char *name, const char **registered);
/* names_list formats the names of n items of size bytes, each of which
 * begins with its name (a char pointer), as Go prints a []string: [A B]. */
static const char *names_list(const void *items, size_t n, size_t size);
/* activate applies an activation's jobs, in order, runs the orchestration
 * once, and returns the commands, encoded as an ActivationResult. */
static dbx_bytes activate(const wire_activation *a);
static void query(const wire_query_request *q, buf *out, dbx_reply *r);
static void reply_init(dbx_reply *r);
static void reply_failf(dbx_reply *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply_encode(buf *out, dbx_reply *r, uint32_t output_field, uint32_t failure_field);

#endif
