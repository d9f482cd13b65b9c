/*
 * memory.c: the heap, as the SDK uses it. Running out of memory traps (the
 * host fails the instance, or the activity's attempt, with the message);
 * growable buffers; and scratch memory, freed all at once when a call into
 * the module ends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static _Noreturn void die(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fputs("durabox: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fflush(stderr);
	abort();
}

static void *xmalloc(size_t n) {
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes more)", n);
	return p;
}

static void *xrealloc(void *p, size_t n) {
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

static char *xstrndup(const char *s, size_t n) {
	char *d = xmalloc(n + 1);
	if (n)
		memcpy(d, s, n);
	d[n] = 0;
	return d;
}

static void buf_grow(buf *b, size_t n) {
	if (n <= b->cap - b->len)
		return;
	if (n > SIZE_MAX / 2 - b->len)
		die("out of memory (a buffer of %zu bytes more)", n);
	size_t cap = b->cap ? b->cap : 64;
	while (cap - b->len < n)
		cap *= 2;
	b->ptr = xrealloc(b->ptr, cap);
	b->cap = cap;
}

static void buf_put(buf *b, const void *p, size_t n) {
	if (n == 0)
		return;
	buf_grow(b, n);
	memcpy(b->ptr + b->len, p, n);
	b->len += n;
}

static void buf_byte(buf *b, uint8_t c) { buf_put(b, &c, 1); }

/* Scratch memory is a list of blocks, each from malloc; scratch_reset frees
 * them all. The SDK resets it when each call into the module begins, so
 * what a call allocates lives until the host's next call. */
typedef struct scratch_block {
	struct scratch_block *next;
	max_align_t data[];
} scratch_block;

static scratch_block *scratch;

static void *scratch_alloc(size_t n) {
	if (n > SIZE_MAX - sizeof(scratch_block))
		die("out of memory (%zu bytes of scratch)", n);
	scratch_block *blk = xmalloc(sizeof(scratch_block) + n);
	blk->next = scratch;
	scratch = blk;
	return blk->data;
}

static char *scratch_vfmt(const char *fmt, va_list ap) {
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	if (n < 0)
		die("a format string that vsnprintf refuses: %s", fmt);
	char *s = scratch_alloc((size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, again);
	va_end(again);
	return s;
}

static void scratch_reset(void) {
	while (scratch) {
		scratch_block *next = scratch->next;
		free(scratch);
		scratch = next;
	}
}

void *dbx_alloc(size_t n) { return scratch_alloc(n); }

char *dbx_fmt(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	char *s = scratch_vfmt(fmt, ap);
	va_end(ap);
	return s;
}

dbx_bytes dbx_str(const char *s) { return (dbx_bytes){(const uint8_t *)s, s ? strlen(s) : 0}; }
