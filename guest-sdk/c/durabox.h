/*
 * durabox.h: the Durabox guest SDK for C.
 *
 * A module written with it is compiled to WebAssembly (WASI preview 1, a
 * reactor) with clang and wasi-libc, and deployed to a Durabox host, which
 * runs its orchestrations durably: every step is recorded in history, and
 * after a crash an orchestration is replayed from it and carries on.
 *
 * The model, in one paragraph (README.md has the whole guide): an
 * orchestration is a C function that the SDK runs again from its first line
 * every time something it waits for happens. Each call that starts an
 * operation (an activity, a timer, a wait for an event, a child) returns a
 * future; the first run that reaches the call starts the operation, and every
 * later run gets the same future back. A future that has not resolved yet
 * ends the run: DBX_AWAIT(f) returns DBX_BLOCKED from the orchestration, and
 * the SDK runs it again, from the start, once the future's result is in. So
 * an orchestration must decide only from its input and its futures' results,
 * and do the same calls in the same order every run; the SDK checks that it
 * does, and fails the instance, saying where, when it does not.
 *
 *     static dbx_step greeting(dbx_ctx *ctx, dbx_bytes input) {
 *         dbx_future *hello = dbx_activity(ctx, "SayHello", input);
 *         DBX_AWAIT(hello);
 *         return dbx_return_future(ctx, hello);
 *     }
 *
 *     static void say_hello(dbx_reply *r, dbx_bytes input) {
 *         char *name;
 *         if (dbx_json_string(input, &name) != 0)
 *             dbx_reply_fail(r, "the input is not a JSON string");
 *         else
 *             dbx_reply_string(r, dbx_fmt("Hello, %s!", name));
 *     }
 *
 *     void dbx_main(void) {
 *         dbx_register_orchestration("Greeting", greeting);
 *         dbx_register_activity("SayHello", say_hello);
 *     }
 *
 * Memory: the bytes of a future's result and of an orchestration's input
 * stay valid for the instance's life. What dbx_fmt, dbx_quote and the JSON
 * readers return lives in scratch memory that the SDK frees when the call
 * into the module ends (the end of a run, of an activity, of a query):
 * never keep it in a static variable.
 */
#ifndef DURABOX_H
#define DURABOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dbx_bytes is a view of bytes someone else owns: JSON, mostly. */
typedef struct {
	const uint8_t *ptr;
	size_t len;
} dbx_bytes;

/* dbx_str views a NUL-terminated string (NULL views no bytes). */
dbx_bytes dbx_str(const char *s);

/* ---- Registration --------------------------------------------------- */

/* dbx_ctx is an orchestration's handle on its instance, valid during a run. */
typedef struct dbx_ctx dbx_ctx;
/* dbx_future is one operation's eventual result. */
typedef struct dbx_future dbx_future;
/* dbx_reply is what an activity or a query answers with. */
typedef struct dbx_reply dbx_reply;

/* dbx_step is what an orchestration function returns: DBX_BLOCKED when a
 * future it needs has not resolved (DBX_AWAIT returns it), DBX_DONE once it
 * has ended the execution (what dbx_complete, dbx_fail and
 * dbx_continue_as_new return). */
typedef enum { DBX_BLOCKED = 0, DBX_DONE = 1 } dbx_step;

typedef dbx_step (*dbx_orchestration_fn)(dbx_ctx *ctx, dbx_bytes input);
typedef void (*dbx_activity_fn)(dbx_reply *r, dbx_bytes input);
typedef void (*dbx_query_fn)(dbx_reply *r, dbx_bytes arg, void *data);
typedef dbx_step (*dbx_update_fn)(dbx_ctx *ctx, dbx_bytes arg, void *data);
typedef const char *(*dbx_validate_fn)(dbx_bytes arg, void *data);

/* dbx_main is the module's to write: it registers its orchestrations and
 * activities, and runs once, while the module starts (before any other
 * call). */
void dbx_main(void);

/* Register fn under name (1 to 256 bytes of UTF-8 without control
 * characters, as a host requires: durabox check and deploy refuse a module
 * that registers another, naming it). A name registered twice traps while
 * the module starts, saying so on stderr. */
void dbx_register_orchestration(const char *name, dbx_orchestration_fn fn);
void dbx_register_activity(const char *name, dbx_activity_fn fn);

/* ---- Orchestrations ---------------------------------------------------- */

/* Operations. Inputs are JSON (an empty one means null). Each returns the
 * operation's future, the same one on every run. */
dbx_future *dbx_activity(dbx_ctx *ctx, const char *name, dbx_bytes input);
/* dbx_activity_timeout gives each attempt a deadline, in milliseconds (0:
 * the host's --activity-timeout). */
dbx_future *dbx_activity_timeout(dbx_ctx *ctx, const char *name, dbx_bytes input, uint32_t timeout_ms);
/* dbx_timer resolves after delay nanoseconds of logical time. */
dbx_future *dbx_timer(dbx_ctx *ctx, int64_t delay_ns);
/* dbx_wait_event resolves with the data of the next event called name
 * raised while the wait is open; an event raised while none is open is
 * dropped. dbx_wait_event_persistent takes the oldest persistent event of
 * that name no wait took yet, raised before or after. */
dbx_future *dbx_wait_event(dbx_ctx *ctx, const char *name);
dbx_future *dbx_wait_event_persistent(dbx_ctx *ctx, const char *name);
/* dbx_child starts the orchestration name as a child instance and resolves
 * with its result. id NULL lets the host derive one
 * (PARENT~EXECUTION:EVENT). dbx_child_detached starts one nobody waits for:
 * its future is resolved at once. */
dbx_future *dbx_child(dbx_ctx *ctx, const char *name, dbx_bytes input, const char *id);
dbx_future *dbx_child_detached(dbx_ctx *ctx, const char *name, dbx_bytes input, const char *id);
/* dbx_raise raises the event name with data at another instance; the future
 * resolves once it is delivered, or fails saying why not. */
dbx_future *dbx_raise(dbx_ctx *ctx, const char *instance, const char *name, dbx_bytes data, bool persistent);

/* dbx_cancel cancels f's operation, if it is still open (a timer will not
 * fire, an activity's result is ignored, a wait takes no event, a child is
 * cancelled): f fails with "durabox: the operation was cancelled". */
void dbx_cancel(dbx_ctx *ctx, dbx_future *f);
/* dbx_select waits for the first of n futures to resolve and returns its
 * index (the first in the list when several have), cancelling the others;
 * -1 while none has: then return DBX_BLOCKED (DBX_SELECT does). The choice
 * is remembered, so every later run gets the same index.
 * dbx_select_keep is the same without cancelling. */
int dbx_select(dbx_ctx *ctx, dbx_future *const *fs, int n);
int dbx_select_keep(dbx_ctx *ctx, dbx_future *const *fs, int n);

/* Futures. dbx_ready says whether f has resolved; dbx_error is NULL when it
 * succeeded, else the failure's message (such as `activity "Charge" failed:
 * declined`); dbx_result is its JSON result (an empty view before). */
bool dbx_ready(const dbx_future *f);
const char *dbx_error(const dbx_future *f);
dbx_bytes dbx_result(const dbx_future *f);

#define DBX_AWAIT(f)                                                                                   \
	do {                                                                                           \
		if (!dbx_ready(f))                                                                     \
			return DBX_BLOCKED;                                                            \
	} while (0)
/* DBX_TRY awaits f and ends the orchestration with f's failure, if it
 * failed: the orchestration goes on only with a result. */
#define DBX_TRY(ctx, f)                                                                                \
	do {                                                                                           \
		if (!dbx_ready(f))                                                                     \
			return DBX_BLOCKED;                                                            \
		if (dbx_error(f))                                                                      \
			return dbx_return_future((ctx), (f));                                          \
	} while (0)
/* DBX_SELECT sets var to dbx_select's index, or returns DBX_BLOCKED. */
#define DBX_SELECT(var, ctx, fs, n)                                                                    \
	do {                                                                                           \
		if (((var) = dbx_select((ctx), (fs), (n))) < 0)                                        \
			return DBX_BLOCKED;                                                            \
	} while (0)

/* Ending. Each returns DBX_DONE, for the orchestration to return. */
dbx_step dbx_complete(dbx_ctx *ctx, dbx_bytes output);
dbx_step dbx_fail(dbx_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* dbx_return_future ends with f's outcome: its result, or its failure. */
dbx_step dbx_return_future(dbx_ctx *ctx, const dbx_future *f);
/* dbx_continue_as_new ends this execution and starts the next one of the
 * same orchestration with input and an empty history. */
dbx_step dbx_continue_as_new(dbx_ctx *ctx, dbx_bytes input);

/* The instance. */
const char *dbx_instance_id(const dbx_ctx *ctx);
/* dbx_now is the logical time, in Unix nanoseconds: the time of the step in
 * which the code first reached this call, the same on every later run and
 * every replay (read the time with it, not with time() or clock_gettime(),
 * which say the time of the step being applied). */
int64_t dbx_now(dbx_ctx *ctx);
/* dbx_is_replaying says whether the step being applied was recorded in an
 * earlier turn. Decide nothing by it. */
bool dbx_is_replaying(const dbx_ctx *ctx);
/* dbx_cancelled is the reason given (perhaps "") if the instance's
 * cancellation had been requested when the code first reached this call,
 * else NULL. The operations open then fail; new ones, to clean up, run as
 * usual. */
const char *dbx_cancelled(dbx_ctx *ctx);
/* dbx_set_custom_status records a short text about the instance's progress. */
void dbx_set_custom_status(dbx_ctx *ctx, const char *text);
/* dbx_patched says whether this instance takes the new code path of the
 * change id: true where it reaches the question on new code, false where it
 * replays a step that ran before the change. The answer holds for the
 * execution. */
bool dbx_patched(dbx_ctx *ctx, const char *change);
/* dbx_log writes a line to the instance's log, once: not again when the
 * orchestration runs again from the start. The host logs it at info, or at
 * the level the format begins with (one of DBX_ERROR, DBX_WARNING, DBX_INFO,
 * DBX_DEBUG), which durabox serve --log-level filters:
 * dbx_log(ctx, DBX_ERROR "charge failed: %s", why). */
void dbx_log(dbx_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The levels of a line of output, an orchestration's or an activity's: a
 * syslog priority in angle brackets at the start of the line (abi/ABI.md,
 * "Log lines"). */
#define DBX_ERROR "<3>"
#define DBX_WARNING "<4>"
#define DBX_INFO "<6>"
#define DBX_DEBUG "<7>"
/* dbx_handle_query registers fn as the handler of the query name: a
 * client's durabox query ID NAME runs fn(reply, arg, data). fn only reads
 * (what data points to must outlive the run: a static variable, or the
 * bytes of a future's result), and answers with dbx_reply_*. */
void dbx_handle_query(dbx_ctx *ctx, const char *name, dbx_query_fn fn, void *data);
/* dbx_handle_update registers fn as the handler of the update name: a
 * client's durabox update ID NAME runs fn(ctx, arg, data) and gets its
 * answer on the same call. Registering a name again replaces its handler.
 *
 * An update is recorded in history and replayed like everything else. Its
 * handler is code of the orchestration, run as the orchestration function
 * is (from its first line, after every activation, with DBX_AWAIT and the
 * rest), beside it, until it answers: dbx_complete(ctx, output) answers
 * the update, dbx_fail (or DBX_TRY on a failed future) answers it with a
 * failure, and the instance goes on either way. The orchestration code
 * runs first in a step, then each handler in the order the updates came;
 * once a handler answers, the orchestration runs again in the same step.
 * A handler runs again until it answers, so it changes the orchestration's
 * state (static variables, which the orchestration function does not
 * reset) only after its last DBX_AWAIT, just before it answers.
 *
 * validate, if not NULL, runs first, when the update arrives: it returns
 * NULL to accept the update, or why it refuses it (dbx_fmt's memory will
 * do); a refused update leaves no trace, and the caller gets the reason,
 * as for an update of a name no handler has. Like a query's handler it
 * only reads: using the context refuses the update. It must decide by the
 * state and arg alone: it runs again on every replay, and must accept
 * again what it accepted. data is as for dbx_handle_query. */
void dbx_handle_update(dbx_ctx *ctx, const char *name, dbx_update_fn fn, dbx_validate_fn validate, void *data);
/* dbx_all_handlers_finished says whether every update handler that began
 * has answered. The orchestration's end, or its continuing as new, answers
 * the updates whose handlers have not with a failure; to let them finish:
 *
 *     if (!dbx_all_handlers_finished(ctx))
 *         return DBX_BLOCKED;
 */
bool dbx_all_handlers_finished(const dbx_ctx *ctx);

/* ---- Activities and queries answer through a dbx_reply ------------------ */

/* dbx_reply_json answers with JSON; dbx_reply_string with s as a JSON
 * string; dbx_reply_fail with a failure. Answering nothing answers null. */
void dbx_reply_json(dbx_reply *r, dbx_bytes json);
void dbx_reply_string(dbx_reply *r, const char *s);
void dbx_reply_fail(dbx_reply *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* For an activity: its name, the calling instance, and its attempt (1, or
 * more when an earlier delivery never finished: make activities idempotent). */
const char *dbx_reply_name(const dbx_reply *r);
const char *dbx_reply_instance_id(const dbx_reply *r);
uint32_t dbx_reply_attempt(const dbx_reply *r);

/* ---- Scratch memory and JSON ----------------------------------------- */

/* dbx_alloc returns n bytes of scratch memory; dbx_fmt formats into it. */
void *dbx_alloc(size_t n);
char *dbx_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* dbx_quote returns s as a JSON string, escaped as Go's encoding/json does
 * (so that a C module and a Go one give the same bytes). */
dbx_bytes dbx_quote(const char *s);

/* The JSON readers check every byte: malformed JSON is an error, never a
 * read past the end. Each returns 0 on success and -1 when json is not what
 * it reads (or is not JSON); strings come back NUL-terminated, in scratch
 * memory (a \u0000 in one ends it there). */
int dbx_json_string(dbx_bytes json, char **out);
int dbx_json_bool(dbx_bytes json, bool *out);
int dbx_json_int(dbx_bytes json, int64_t *out);
/* dbx_json_field finds the member name of an object: 1 found, 0 absent, -1
 * not an object. */
int dbx_json_field(dbx_bytes json, const char *name, dbx_bytes *value);
/* dbx_json_array sets *elems to the elements of an array (in scratch
 * memory) and returns their count, or -1 when json is not an array. */
long dbx_json_array(dbx_bytes json, dbx_bytes **elems);
/* dbx_json_valid says whether json is one JSON value. */
bool dbx_json_valid(dbx_bytes json);

#ifdef __cplusplus
}
#endif

#endif
