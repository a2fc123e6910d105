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
#include <string.h>

/*
 * The one sanitizer of names (emit.c's top comment): true if s[0, n) is
 * well-formed UTF-8 with no control character (nor NUL); else
 * tt_emit_clean() makes a malloc'd, NUL-terminated copy with each
 * ill-formed byte and each control character replaced by U+FFFD.
 */
bool tt_emit_is_clean(const char *s, size_t n);
char *tt_emit_clean(const char *s, size_t n);
/* Prints s for a terminal: tt_emit_clean()'s form. */
void tt_emit_text(FILE *f, const char *s);
/* JSON and CSV strings; ill-formed UTF-8 in s becomes U+FFFD. */
void tt_emit_json_str(FILE *f, const char *s);
void tt_emit_csv_str(FILE *f, const char *s);
/* True if a spreadsheet would take the text cell s for a formula (it starts
 * with = + - @ tab or CR): the CSV writers then write a ' before it
 * (docs/ANALYZER.md, "CSV and spreadsheets"). Text cells only: a number is
 * never given to it, so -5 stays a number. */
bool tt_emit_csv_formula(const char *s);
/* "123ns", "1.23µs", "12.3ms", "1.50s": at most 6 display columns. */
void tt_emit_fmt_duration(char *buf, size_t buf_bytes, uint64_t ns);
/* Display columns of s as tt_emit_text() prints it (one per code point). */
size_t tt_emit_width(const char *s);
/* Prints s padded to width columns, right-aligned if right. */
void tt_emit_pad(FILE *f, const char *s, size_t width, bool right);
/* $COLUMNS, else the terminal's width (TIOCGWINSZ on stdout), else 80. */
unsigned tt_emit_terminal_columns(void);

/*
 * Buffered writer to a file descriptor (write(2), EINTR and short writes),
 * or into the pages of a flush hook (out/lanes.h). It points into itself:
 * never copy one.
 */
struct tt_out {
	int fd;
	bool failed;
	int err; /* errno of the first failure */
	size_t len, cap;
	char *buf; /* own, or the hook's page */
	/* NULL: buf goes to fd. Else it takes buf[0, len) when buf is full
	 * and on tt_out_flush(), and leaves buf (maybe another) empty. */
	void (*flush_hook)(struct tt_out *o);
	void *hook_ctx;
	char own[1 << 16];
};

void tt_out_init(struct tt_out *o, int fd);
void tt_out_flush(struct tt_out *o);
void tt_out_write(struct tt_out *o, const char *s, size_t n);
static inline void tt_out_str(struct tt_out *o, const char *s)
{
	size_t n = strlen(s);

	if (o->cap - o->len > n) {
		memcpy(o->buf + o->len, s, n);
		o->len += n;
	} else {
		tt_out_write(o, s, n);
	}
}
/* Make room for n bytes (n <= 4096) and return where to write them. */
static inline char *tt_out_reserve(struct tt_out *o, size_t n)
{
	if (o->cap - o->len < n)
		tt_out_flush(o);
	return o->buf + o->len;
}
/* Decimal digits of v at p; returns the number written. */
size_t tt_emit_u64(char *p, uint64_t v);
/* A JSON string with quotes, into a malloc'd buffer. */
char *tt_emit_json_quote(const char *s);

/*
 * tt_emit_open_output() - open OUT (-o) for writing, never an input:
 * refused when OUT is the same file as in_path (same st_dev and st_ino,
 * whatever path, hard or symbolic link leads to it). A regular file is
 * truncated only after that check; output is written in place (no
 * temporary file: OUT may be a FIFO or /dev/stdout).
 * Return: the fd; -1 (cannot open, exit 1) or -2 (OUT is the input, wrong
 * usage, exit 2) with the problem in msg.
 */
int tt_emit_open_output(const char *out_path, const char *in_path, char *msg, size_t msg_bytes);

#endif /* TT_EMIT_H */
