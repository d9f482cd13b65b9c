/*
 * wire.c: the ABI's encoding (abi/ABI.md, "Encoding"): fields of a key (an
 * unsigned LEB128 varint holding number << 1 | wire type) and a value, a
 * varint or a length and that many bytes. Decoding checks every length
 * against what is left, refuses what the ABI does not allow (a varint past
 * 64 bits, a wire type other than 0 and 1), and skips fields it does not
 * know, as the ABI requires.
 */
#include <string.h>

#include "internal.h"

static int wire_varint(wire_reader *r, uint64_t *v) {
	uint64_t x = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end)
			return -1;
		uint8_t c = *r->p++;
		if (shift == 63 && c > 1)
			return -1;
		x |= (uint64_t)(c & 0x7f) << shift;
		if (c < 0x80) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

static int wire_next(wire_reader *r, wire_field *f) {
	if (r->p >= r->end)
		return 0;
	uint64_t key;
	if (wire_varint(r, &key) != 0 || (key >> 1) > UINT32_MAX)
		return -1;
	f->num = (uint32_t)(key >> 1);
	f->type = (int)(key & 1);
	f->u = 0;
	f->bytes = (dbx_bytes){0};
	if (f->type == WIRE_VARINT)
		return wire_varint(r, &f->u) == 0 ? 1 : -1;
	uint64_t n;
	if (wire_varint(r, &n) != 0 || n > (uint64_t)(r->end - r->p))
		return -1;
	f->bytes = (dbx_bytes){r->p, (size_t)n};
	r->p += n;
	return 1;
}

/* The decoders below read each field they know by its number, and insist
 * on its wire type: a known field of the wrong type is malformed. */
#define WANT(f, t)                                                                                     \
	do {                                                                                           \
		if ((f).type != (t))                                                                   \
			return "a field of the wrong wire type";                                       \
	} while (0)

static const char *decode_failure(dbx_bytes in, wire_failure *out) {
	wire_reader r = {in.ptr, in.ptr + in.len};
	wire_field f;
	int got;
	out->present = true;
	while ((got = wire_next(&r, &f)) > 0) {
		if (f.num == 1 || f.num == 2) {
			WANT(f, WIRE_BYTES);
			*(f.num == 1 ? &out->message : &out->details) = f.bytes;
		}
	}
	return got < 0 ? "a malformed Failure" : NULL;
}

static const char *decode_job(dbx_bytes in, wire_job *j) {
	wire_reader r = {in.ptr, in.ptr + in.len};
	wire_field f;
	int got;
	memset(j, 0, sizeof *j);
	while ((got = wire_next(&r, &f)) > 0) {
		switch (f.num) {
		case 1:
			WANT(f, WIRE_VARINT);
			j->kind = f.u;
			break;
		case 2:
			WANT(f, WIRE_VARINT);
			j->seq = f.u;
			break;
		case 3:
		case 4:
		case 5:
		case 6: {
			WANT(f, WIRE_BYTES);
			dbx_bytes *slot[] = {&j->name, &j->instance_id, &j->input, &j->result};
			*slot[f.num - 3] = f.bytes;
			break;
		}
		case 7: {
			WANT(f, WIRE_BYTES);
			const char *err = decode_failure(f.bytes, &j->failure);
			if (err)
				return err;
			break;
		}
		case 8:
			WANT(f, WIRE_BYTES);
			j->update_id = f.bytes;
			break;
		}
	}
	return got < 0 ? "a malformed Job" : NULL;
}

static const char *wire_decode_activation(dbx_bytes in, wire_activation *a) {
	memset(a, 0, sizeof *a);
	/* Count the jobs first, to size their array. */
	wire_reader r = {in.ptr, in.ptr + in.len};
	wire_field f;
	int got;
	size_t n = 0;
	while ((got = wire_next(&r, &f)) > 0)
		n += f.num == 3;
	if (got < 0)
		return "a malformed Activation";
	a->jobs = scratch_alloc(n * sizeof *a->jobs);
	r = (wire_reader){in.ptr, in.ptr + in.len};
	while (wire_next(&r, &f) > 0) {
		switch (f.num) {
		case 1:
			WANT(f, WIRE_VARINT);
			a->time = (int64_t)(f.u >> 1) ^ -(int64_t)(f.u & 1);
			break;
		case 2:
			WANT(f, WIRE_VARINT);
			a->replaying = f.u != 0;
			break;
		case 3: {
			WANT(f, WIRE_BYTES);
			const char *err = decode_job(f.bytes, &a->jobs[a->njobs++]);
			if (err)
				return err;
			break;
		}
		}
	}
	return NULL;
}

static const char *wire_decode_activity_request(dbx_bytes in, wire_activity_request *q) {
	wire_reader r = {in.ptr, in.ptr + in.len};
	wire_field f;
	int got;
	memset(q, 0, sizeof *q);
	while ((got = wire_next(&r, &f)) > 0) {
		switch (f.num) {
		case 1:
		case 2:
		case 3: {
			WANT(f, WIRE_BYTES);
			dbx_bytes *slot[] = {&q->name, &q->input, &q->instance_id};
			*slot[f.num - 1] = f.bytes;
			break;
		}
		case 4:
			WANT(f, WIRE_VARINT);
			q->attempt = f.u;
			break;
		}
	}
	return got < 0 ? "a malformed ActivityRequest" : NULL;
}

static const char *wire_decode_query_request(dbx_bytes in, wire_query_request *q) {
	wire_reader r = {in.ptr, in.ptr + in.len};
	wire_field f;
	int got;
	memset(q, 0, sizeof *q);
	while ((got = wire_next(&r, &f)) > 0) {
		if (f.num == 1 || f.num == 2) {
			WANT(f, WIRE_BYTES);
			*(f.num == 1 ? &q->name : &q->input) = f.bytes;
		}
	}
	return got < 0 ? "a malformed QueryRequest" : NULL;
}

static void put_varint(buf *b, uint64_t v) {
	while (v >= 0x80) {
		buf_byte(b, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	buf_byte(b, (uint8_t)v);
}

/* Zero values are left out, as the ABI allows. */
static void wire_uint(buf *b, uint32_t num, uint64_t v) {
	if (v == 0)
		return;
	put_varint(b, (uint64_t)num << 1 | WIRE_VARINT);
	put_varint(b, v);
}

static void wire_sint(buf *b, uint32_t num, int64_t v) { wire_uint(b, num, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }

static void wire_bytes(buf *b, uint32_t num, dbx_bytes v) {
	if (v.len == 0)
		return;
	put_varint(b, (uint64_t)num << 1 | WIRE_BYTES);
	put_varint(b, v.len);
	buf_put(b, v.ptr, v.len);
}

static void wire_str(buf *b, uint32_t num, const char *s) { wire_bytes(b, num, dbx_str(s)); }

/* wire_nested appends the message in m as field num of b, and empties m. */
static void wire_nested(buf *b, uint32_t num, buf *m) {
	put_varint(b, (uint64_t)num << 1 | WIRE_BYTES);
	put_varint(b, m->len);
	buf_put(b, m->ptr, m->len);
	m->len = 0;
}

static void wire_encode_failure(buf *b, uint32_t num, const char *message, const char *details) {
	static buf m;
	wire_str(&m, 1, message);
	wire_str(&m, 2, details);
	wire_nested(b, num, &m);
}

/* wire_encode_command appends c to b as an ActivationResult's command
 * (field 1). */
static void wire_encode_command(buf *b, const wire_command *c) {
	static buf m;
	wire_uint(&m, 1, c->kind);
	wire_uint(&m, 2, c->seq);
	wire_str(&m, 3, c->name);
	wire_bytes(&m, 4, c->input);
	wire_sint(&m, 5, c->delay);
	wire_bytes(&m, 6, c->output);
	if (c->fail_message)
		wire_encode_failure(&m, 7, c->fail_message, c->fail_details);
	wire_uint(&m, 8, c->target);
	wire_str(&m, 9, c->instance_id);
	wire_uint(&m, 10, c->detached);
	wire_uint(&m, 11, c->timeout_ms);
	wire_uint(&m, 12, c->persistent);
	wire_str(&m, 13, c->update_id);
	wire_nested(b, 1, &m);
}
