/* SPDX-License-Identifier: MIT */
/*
 * emit.h - the small writers every command's output goes through: CSV and
 * JSON string escaping, readable durations for tables (ns, µs, ms, s in at
 * most 6 columns), padding by display width (UTF-8 aware), the terminal's
 * width, and a buffered fast writer for large outputs (chrome). It knows
 * nothing of traces.
 */
#ifndef TT_EMIT_H
#define TT_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void tt_emit_json_str(FILE *f, const char *s);
void tt_emit_csv_str(FILE *f, const char *s);
/* "123ns", "1.23µs", "12.3ms", "1.50s": at most 6 display columns. */
void tt_emit_fmt_duration(char *buf, size_t buf_bytes, uint64_t ns);
/* Display columns of a UTF-8 string (continuation bytes take none). */
size_t tt_emit_width(const char *s);
/* Prints s padded to width columns, right-aligned if right. */
void tt_emit_pad(FILE *f, const char *s, size_t width, bool right);
/* $COLUMNS, else the terminal's width (TIOCGWINSZ on stdout), else 80. */
unsigned tt_emit_terminal_columns(void);

/* Buffered writer to a file descriptor (write(2), EINTR and short writes). */
struct tt_out {
	int fd;
	bool failed;
	int err; /* errno of the first failure */
	size_t len;
	char buf[1 << 16];
};

void tt_out_init(struct tt_out *o, int fd);
void tt_out_flush(struct tt_out *o);
void tt_out_write(struct tt_out *o, const char *s, size_t n);
static inline void tt_out_str(struct tt_out *o, const char *s)
{
	while (*s) {
		if (o->len == sizeof(o->buf))
			tt_out_flush(o);
		o->buf[o->len++] = *s++;
	}
}
/* Make room for n bytes (n <= 4096) and return where to write them. */
static inline char *tt_out_reserve(struct tt_out *o, size_t n)
{
	if (sizeof(o->buf) - o->len < n)
		tt_out_flush(o);
	return o->buf + o->len;
}
/* Decimal digits of v at p; returns the number written. */
size_t tt_emit_u64(char *p, uint64_t v);
/* A JSON string with quotes, into a malloc'd buffer. */
char *tt_emit_json_quote(const char *s);

#endif /* TT_EMIT_H */
