/*
 * approval is an approval workflow in C, the twin of examples/wasm/approval:
 * a request waits for an Approval event, raised from outside, or times out.
 * The query Decision answers with the decision once there is one, null
 * before.
 */
#include <string.h>

#include "durabox.h"

/* decided is the decision, as the query answers it, once there is one: a
 * static variable, since a wasm instance runs one orchestration instance. */
static char *decided;

static void decision_query(dbx_reply *r, dbx_bytes arg, void *data) {
	(void)arg, (void)data;
	dbx_reply_json(r, dbx_str(decided ? decided : "null"));
}

/* parse_duration reads a Go duration such as "24h" or "1h30m" into
 * nanoseconds, and returns 0; -1 when s is not one. */
static int parse_duration(const char *s, int64_t *out) {
	static const struct {
		const char *unit;
		int64_t ns;
	} units[] = {{"ns", 1}, {"us", 1000}, {"µs", 1000}, {"ms", 1000000}, {"s", 1000000000}, {"m", 60000000000}, {"h", 3600000000000}};
	int64_t sign = 1, total = 0;
	if (*s == '-' || *s == '+')
		sign = *s++ == '-' ? -1 : 1;
	if (strcmp(s, "0") == 0) {
		*out = 0;
		return 0;
	}
	if (!*s)
		return -1;
	while (*s) {
		double n = 0, scale = 1;
		const char *start = s;
		for (; *s >= '0' && *s <= '9'; s++)
			n = n * 10 + (*s - '0');
		if (*s == '.')
			for (s++; *s >= '0' && *s <= '9'; s++)
				n += (*s - '0') * (scale /= 10);
		if (s == start || (s == start + 1 && *start == '.'))
			return -1;
		size_t k = 0, nunits = sizeof units / sizeof units[0];
		while (k < nunits && strncmp(s, units[k].unit, strlen(units[k].unit)) != 0)
			k++;
		/* "m" would take "ms": units lists ms first. */
		if (k == nunits)
			return -1;
		s += strlen(units[k].unit);
		double ns = n * (double)units[k].ns;
		if (ns > 9.2e18 - (double)total)
			return -1;
		total += (int64_t)ns;
	}
	*out = sign * total;
	return 0;
}

/* string_field reads the member name of obj as a string ("" if absent). */
static int string_field(dbx_bytes obj, const char *name, char **out) {
	dbx_bytes v;
	*out = "";
	switch (dbx_json_field(obj, name, &v)) {
	case 0:
		return 0;
	case 1:
		return dbx_json_string(v, out);
	default:
		return -1;
	}
}

/* approval asks for a decision and acts on it, or gives up at the timeout. */
static dbx_step approval(dbx_ctx *ctx, dbx_bytes input) {
	dbx_handle_query(ctx, "Decision", decision_query, NULL);
	char *item, *timeout_text;
	if (string_field(input, "item", &item) != 0 || string_field(input, "timeout", &timeout_text) != 0)
		return dbx_fail(ctx, "durabox: the input %.*s is not a request {\"item\": \"...\", \"timeout\": \"24h\"}",
		                (int)input.len, (const char *)input.ptr);
	int64_t timeout;
	if (parse_duration(timeout_text, &timeout) != 0)
		return dbx_fail(ctx, "timeout \"%s\" is not a duration such as 24h", timeout_text);

	dbx_future *asked = dbx_activity(ctx, "Notify", dbx_quote(dbx_fmt("please approve %s", item)));
	DBX_TRY(ctx, asked);
	dbx_set_custom_status(ctx, dbx_fmt("waiting for a decision on %s", item));
	dbx_future *decision = dbx_wait_event(ctx, "Approval");
	dbx_future *race[] = {decision, dbx_timer(ctx, timeout)};
	int won;
	DBX_SELECT(won, ctx, race, 2);
	if (won == 1) {
		dbx_future *expired =
		    dbx_activity(ctx, "Notify", dbx_quote(dbx_fmt("%s: no decision in %s, request expired", item, timeout_text)));
		DBX_AWAIT(expired);
		return dbx_return_future(ctx, expired);
	}
	DBX_TRY(ctx, decision);
	/* The event's data decodes as Go decodes it into a Decision: null and
	 * missing members are false and "". */
	dbx_bytes data = dbx_result(decision), v;
	bool approved = false;
	char *by = "";
	if (!(data.len == 4 && memcmp(data.ptr, "null", 4) == 0)) {
		int has = dbx_json_field(data, "approved", &v);
		if (has < 0 || (has == 1 && dbx_json_bool(v, &approved) != 0) || string_field(data, "by", &by) != 0)
			return dbx_fail(ctx, "durabox: the Approval event's data %.*s is not a decision {\"approved\": true, \"by\": \"...\"}",
			                (int)data.len, (const char *)data.ptr);
	}
	if (!decided) {
		dbx_bytes who = dbx_quote(by);
		char *answer = dbx_fmt("{\"approved\":%s,\"by\":%.*s}", approved ? "true" : "false", (int)who.len, (const char *)who.ptr);
		decided = strdup(answer);
	}
	dbx_future *told =
	    dbx_activity(ctx, "Notify", dbx_quote(dbx_fmt("%s %s by %s", item, approved ? "approved" : "rejected", by)));
	DBX_AWAIT(told);
	return dbx_return_future(ctx, told);
}

/* notify tells people; here it returns what it would say. */
static void notify(dbx_reply *r, dbx_bytes message) { dbx_reply_json(r, message); }

void dbx_main(void) {
	dbx_register_orchestration("Approval", approval);
	dbx_register_activity("Notify", notify);
}
