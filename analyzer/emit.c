/* SPDX-License-Identifier: MIT */
/*
 * emit.c - output helpers of emit.h. JSON escaping follows RFC 8259 (control
 * characters as \u00XX; bytes >= 0x80 are passed through as UTF-8); CSV
 * quoting follows RFC 4180.
 */
#include "emit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static size_t json_escape(char *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			if (out) {
				out[n] = '\\';
				out[n + 1] = (char)c;
			}
			n += 2;
		} else if (c < 0x20) {
			if (out) {
				memcpy(out + n, "\\u00", 4);
				out[n + 4] = hex[c >> 4];
				out[n + 5] = hex[c & 15];
			}
			n += 6;
		} else {
			if (out)
				out[n] = (char)c;
			n++;
		}
	}
	return n;
}

char *tt_emit_json_quote(const char *s)
{
	size_t n = json_escape(NULL, s);
	char *out = malloc(n + 3);

	if (!out)
		return NULL;
	out[0] = '"';
	json_escape(out + 1, s);
	out[n + 1] = '"';
	out[n + 2] = '\0';
	return out;
}

void tt_emit_json_str(FILE *f, const char *s)
{
	char *q = tt_emit_json_quote(s);

	if (q)
		fputs(q, f);
	free(q);
}

void tt_emit_csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void tt_emit_fmt_duration(char *buf, size_t buf_bytes, uint64_t ns)
{
	static const struct { const char *unit; uint64_t scale; } units[] = {
		{ "µs", 1000ull }, { "ms", 1000000ull }, { "s", 1000000000ull },
	};

	if (ns < 1000) {
		snprintf(buf, buf_bytes, "%uns", (unsigned)ns);
		return;
	}
	for (size_t i = 0; i < 3; i++) {
		/* Three significant digits, rounded in integers; promote on carry. */
		uint64_t scale = units[i].scale;
		uint64_t hundredths = (uint64_t)(((unsigned __int128)ns * 100 + scale / 2) / scale);

		if (hundredths < 1000) {
			snprintf(buf, buf_bytes, "%u.%02u%s", (unsigned)(hundredths / 100),
				 (unsigned)(hundredths % 100), units[i].unit);
			return;
		}
		if (hundredths < 10000) {
			uint64_t tenths = (hundredths + 5) / 10;

			if (tenths < 1000) {
				snprintf(buf, buf_bytes, "%u.%u%s", (unsigned)(tenths / 10),
					 (unsigned)(tenths % 10), units[i].unit);
				return;
			}
		}
		{
			uint64_t whole = (hundredths + 50) / 100;

			if (whole < 1000 || i == 2) {
				snprintf(buf, buf_bytes, "%llu%s", (unsigned long long)whole,
					 units[i].unit);
				return;
			}
		}
	}
}

size_t tt_emit_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

void tt_emit_pad(FILE *f, const char *s, size_t width, bool right)
{
	size_t w = tt_emit_width(s);

	if (right)
		for (; w < width; w++)
			fputc(' ', f);
	fputs(s, f);
	if (!right)
		for (; w < width; w++)
			fputc(' ', f);
}

unsigned tt_emit_terminal_columns(void)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;

	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);

		if (!*end && v >= 20 && v <= 1000)
			return (unsigned)v;
	}
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

void tt_out_init(struct tt_out *o, int fd)
{
	o->fd = fd;
	o->failed = false;
	o->err = 0;
	o->len = 0;
}

void tt_out_flush(struct tt_out *o)
{
	size_t off = 0;

	while (off < o->len && !o->failed) {
		ssize_t n = write(o->fd, o->buf + off, o->len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			o->failed = true;
			o->err = errno;
			break;
		}
		off += (size_t)n;
	}
	o->len = 0;
}

void tt_out_write(struct tt_out *o, const char *s, size_t n)
{
	while (n) {
		size_t room = sizeof(o->buf) - o->len, k = n < room ? n : room;

		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
		if (o->len == sizeof(o->buf))
			tt_out_flush(o);
	}
}

size_t tt_emit_u64(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}
