/*
 * json.c: JSON for orchestrations and activities. Writing: strings quoted
 * byte for byte as Go's encoding/json quotes them, so that a C module and a
 * Go one send the host the same inputs (which history compares byte for
 * byte). Reading: a validating reader that never reads past the end of its
 * input, and refuses what is not JSON; no value nests deeper than
 * JSON_DEPTH.
 */
#include <string.h>

#include "internal.h"

enum { JSON_DEPTH = 256 };

/* utf8_next decodes the character at p: its code point, or -1 when the
 * bytes are not UTF-8 (overlong, a surrogate, past U+10FFFF, cut short).
 * *size is how many bytes it took (1 for an invalid byte). */
static int32_t utf8_next(const uint8_t *p, const uint8_t *end, size_t *size) {
	*size = 1;
	uint8_t c = p[0];
	if (c < 0x80)
		return c;
	size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
	if (n == 0 || c > 0xf4 || (size_t)(end - p) < n)
		return -1;
	int32_t r = c & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return -1;
		r = r << 6 | (p[i] & 0x3f);
	}
	static const int32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
	if (r < least[n] || r > 0x10ffff || (r >= 0xd800 && r <= 0xdfff))
		return -1;
	*size = n;
	return r;
}

static void json_quote(buf *b, const char *s, size_t len) {
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = (const uint8_t *)s, *end = p + len;
	buf_byte(b, '"');
	while (p < end) {
		size_t n;
		int32_t r = utf8_next(p, end, &n);
		char esc[7] = {0};
		switch (r) {
		case '"':
		case '\\':
			esc[0] = '\\', esc[1] = (char)r;
			break;
		case '\n':
			memcpy(esc, "\\n", 2);
			break;
		case '\r':
			memcpy(esc, "\\r", 2);
			break;
		case '\t':
			memcpy(esc, "\\t", 2);
			break;
		case '\b':
			memcpy(esc, "\\b", 2);
			break;
		case '\f':
			memcpy(esc, "\\f", 2);
			break;
		case -1:
			memcpy(esc, "\\ufffd", 6);
			break;
		default:
			/* Control characters, and what Go escapes for HTML. */
			if (r < 0x20 || r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029) {
				memcpy(esc, "\\u", 2);
				for (int i = 0; i < 4; i++)
					esc[2 + i] = hex[(r >> (12 - 4 * i)) & 0xf];
			}
		}
		if (esc[0])
			buf_put(b, esc, strlen(esc));
		else
			buf_put(b, p, n);
		p += n;
	}
	buf_byte(b, '"');
}

dbx_bytes dbx_quote(const char *s) {
	static buf b;
	b.len = 0;
	json_quote(&b, s, strlen(s));
	uint8_t *out = scratch_alloc(b.len);
	memcpy(out, b.ptr, b.len);
	return (dbx_bytes){out, b.len};
}

static const uint8_t *skip_space(const uint8_t *p, const uint8_t *end) {
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static int hex_value(uint8_t c) {
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* read_hex4 reads the four hex digits at p, or returns -1. */
static int32_t read_hex4(const uint8_t *p, const uint8_t *end) {
	if (end - p < 4)
		return -1;
	int32_t r = 0;
	for (int i = 0; i < 4; i++) {
		int h = hex_value(p[i]);
		if (h < 0)
			return -1;
		r = r << 4 | h;
	}
	return r;
}

/* read_string reads the string whose opening quote is at p and returns
 * the end of it; when out is not NULL, appends what it holds, unescaped
 * (a lone surrogate as U+FFFD, as Go reads it). NULL when it is not a
 * string. */
static const uint8_t *read_string(const uint8_t *p, const uint8_t *end, buf *out) {
	if (p >= end || *p != '"')
		return NULL;
	p++;
	while (p < end && *p != '"') {
		if (*p < 0x20)
			return NULL;
		if (*p != '\\') {
			size_t n;
			if (utf8_next(p, end, &n) < 0)
				return NULL;
			if (out)
				buf_put(out, p, n);
			p += n;
			continue;
		}
		if (++p >= end)
			return NULL;
		uint8_t c = *p++;
		const char *simple = strchr("\"\\/bfnrt", c);
		if (c != 0 && simple) {
			if (out)
				buf_byte(out, (uint8_t) "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"]);
			continue;
		}
		if (c != 'u')
			return NULL;
		int32_t r = read_hex4(p, end);
		if (r < 0)
			return NULL;
		p += 4;
		if (r >= 0xd800 && r < 0xdc00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
			int32_t lo = read_hex4(p + 2, end);
			if (lo >= 0xdc00 && lo <= 0xdfff) {
				r = 0x10000 + ((r - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
		}
		if (r >= 0xd800 && r <= 0xdfff)
			r = 0xfffd;
		if (out) {
			uint8_t u[4];
			size_t n = r < 0x80 ? 1 : r < 0x800 ? 2 : r < 0x10000 ? 3 : 4;
			static const uint8_t lead[] = {0, 0, 0xc0, 0xe0, 0xf0};
			for (size_t i = n - 1; i > 0; i--, r >>= 6)
				u[i] = (uint8_t)(0x80 | (r & 0x3f));
			u[0] = (uint8_t)(n == 1 ? r : (lead[n] | r));
			buf_put(out, u, n);
		}
	}
	return p < end ? p + 1 : NULL;
}

static const uint8_t *skip_digits(const uint8_t *p, const uint8_t *end) {
	const uint8_t *start = p;
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p > start ? p : NULL;
}

static const uint8_t *skip_number(const uint8_t *p, const uint8_t *end) {
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (!(p = skip_digits(p, end)))
		return NULL;
	if (p < end && *p == '.' && !(p = skip_digits(p + 1, end)))
		return NULL;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!(p = skip_digits(p, end)))
			return NULL;
	}
	return p;
}

/* skip_members skips the elements of an array or the members of an
 * object, p just past its opening bracket, and returns the end of it. */
static const uint8_t *skip_members(const uint8_t *p, const uint8_t *end, int depth, bool object) {
	uint8_t close = object ? '}' : ']';
	p = skip_space(p, end);
	if (p < end && *p == close)
		return p + 1;
	for (;;) {
		if (object) {
			p = read_string(skip_space(p, end), end, NULL);
			if (!p)
				return NULL;
			p = skip_space(p, end);
			if (p >= end || *p++ != ':')
				return NULL;
		}
		p = json_skip(p, end, depth + 1);
		if (!p)
			return NULL;
		p = skip_space(p, end);
		if (p >= end)
			return NULL;
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const uint8_t *json_skip(const uint8_t *p, const uint8_t *end, int depth) {
	if (depth > JSON_DEPTH)
		return NULL;
	p = skip_space(p, end);
	if (p >= end)
		return NULL;
	switch (*p) {
	case '"':
		return read_string(p, end, NULL);
	case '{':
	case '[':
		return skip_members(p + 1, end, depth, *p == '{');
	case 't':
	case 'f':
	case 'n': {
		const char *word = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
		size_t n = strlen(word);
		return (size_t)(end - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
	}
	default:
		return skip_number(p, end);
	}
}

/* whole finds the one value json holds: it sets *start to it and *end to
 * the end of json, and returns false when json holds anything else
 * (nothing, more than one, not JSON). */
static bool whole(dbx_bytes json, const uint8_t **start, const uint8_t **end) {
	if (!json.ptr)
		return false;
	*end = json.ptr + json.len;
	*start = skip_space(json.ptr, *end);
	const uint8_t *after = json_skip(*start, *end, 0);
	return after && skip_space(after, *end) == *end;
}

bool dbx_json_valid(dbx_bytes json) {
	const uint8_t *p, *end;
	return whole(json, &p, &end);
}

/* scratch_string copies b's bytes into scratch memory, NUL-terminated. */
static char *scratch_string(const buf *b) {
	char *s = scratch_alloc(b->len + 1);
	if (b->len)
		memcpy(s, b->ptr, b->len);
	s[b->len] = 0;
	return s;
}

int dbx_json_string(dbx_bytes json, char **out) {
	static buf b;
	const uint8_t *p, *end;
	b.len = 0;
	if (!whole(json, &p, &end) || !read_string(p, end, &b))
		return -1;
	*out = scratch_string(&b);
	return 0;
}

int dbx_json_bool(dbx_bytes json, bool *out) {
	const uint8_t *p, *end;
	if (!whole(json, &p, &end) || (*p != 't' && *p != 'f'))
		return -1;
	*out = *p == 't';
	return 0;
}

int dbx_json_int(dbx_bytes json, int64_t *out) {
	const uint8_t *p, *end;
	if (!whole(json, &p, &end) || (*p != '-' && (*p < '0' || *p > '9')))
		return -1;
	bool neg = *p == '-';
	uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (p += neg; p < end && *p >= '0' && *p <= '9'; p++) {
		if (v > (limit - (uint64_t)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (skip_space(p, end) != end)
		return -1; /* a fraction or an exponent: not an integer */
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int dbx_json_field(dbx_bytes json, const char *name, dbx_bytes *value) {
	static buf key;
	const uint8_t *p, *end;
	if (!whole(json, &p, &end) || *p != '{')
		return -1;
	p = skip_space(p + 1, end);
	if (*p == '}')
		return 0;
	for (;;) {
		key.len = 0;
		p = read_string(skip_space(p, end), end, &key);
		p = skip_space(p, end);
		p++; /* the ':' (whole checked the object) */
		const uint8_t *v = skip_space(p, end);
		p = json_skip(v, end, 1);
		if (key.len == strlen(name) && memcmp(key.ptr, name, key.len) == 0) {
			*value = (dbx_bytes){v, (size_t)(p - v)};
			return 1;
		}
		p = skip_space(p, end);
		if (*p++ == '}')
			return 0;
	}
}

long dbx_json_array(dbx_bytes json, dbx_bytes **elems) {
	const uint8_t *p, *end;
	if (!whole(json, &p, &end) || *p != '[')
		return -1;
	/* Count, then fill: whole checked the array, so each step is sound. */
	long n = 0;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			*elems = scratch_alloc((size_t)n * sizeof **elems);
		const uint8_t *q = skip_space(p + 1, end);
		long i = 0;
		while (*q != ']') {
			const uint8_t *v = skip_space(q, end);
			q = json_skip(v, end, 1);
			if (pass == 1)
				(*elems)[i] = (dbx_bytes){v, (size_t)(q - v)};
			i++;
			q = skip_space(q, end);
			if (*q == ',')
				q = skip_space(q + 1, end);
		}
		n = i;
	}
	return n;
}
