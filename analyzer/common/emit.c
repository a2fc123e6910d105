/* SPDX-License-Identifier: MIT */
/*
 * emit.c - output helpers of emit.h. Every name a trace holds goes through one
 * sanitizer, tt_emit_clean(), before any command prints it (events.c cleans
 * names when it interns them): well-formed UTF-8 stays as it is; every byte of
 * an ill-formed sequence (a stray continuation byte, an overlong form, a
 * surrogate, a code point above U+10FFFF, a sequence cut short) and every
 * control character (C0 including tab, DEL, C1) becomes U+FFFD, but a line
 * break (LF or CR) becomes '_' (tracetool(1)'s rule for tree paths, so that a
 * name reads the same in every view). So JSON and CSV are valid UTF-8 and a
 * table never sends a control character to a terminal. The writers below apply
 * the same rule again to whatever else they are given (paths, messages). JSON
 * escaping follows RFC 8259 (control characters as \u00XX); CSV quoting
 * follows RFC 4180, and a CSV text cell that a spreadsheet would take for a
 * formula (its first character one of = + - @ tab CR) gets a leading ' as
 * OWASP's "CSV injection" advice says; numbers never go through it.
 */
#include "common/emit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/xalloc.h"

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

/*
 * Length of the well-formed UTF-8 sequence at s (Unicode 15, table 3-7),
 * at most left bytes, with its code point in *cp; 0 if ill-formed.
 */
static size_t utf8_next(const unsigned char *s, size_t left, uint32_t *cp)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (left < n || s[1] < lo || s[1] > hi)
		return 0;
	*cp = c & (0xff >> (n + 1));
	for (size_t k = 1; k < n; k++) {
		if (k > 1 && (s[k] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[k] & 0x3f);
	}
	return n;
}

static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
}

/* Bytes of the clean form of s[0, n), written to out unless it is NULL. */
static size_t clean(char *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = 0;

	for (size_t i = 0; i < n;) {
		uint32_t cp = 0;
		size_t k = utf8_next(p + i, n - i, &cp);

		if (k && !is_control(cp)) {
			if (out)
				memcpy(out + len, p + i, k);
			len += k;
			i += k;
		} else if (k == 1 && (cp == '\n' || cp == '\r')) {
			/* A line break becomes '_', as tracetool(1) says of tree's
			 * paths: one name in every view. */
			if (out)
				out[len] = '_';
			len++;
			i++;
		} else {
			if (out)
				memcpy(out + len, replacement, 3);
			len += 3;
			i += k ? k : 1;
		}
	}
	return len;
}

bool tt_emit_is_clean(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k;

		if (p[i] >= 0x20 && p[i] < 0x7f) {
			i++;
			continue;
		}
		k = utf8_next(p + i, n - i, &cp);
		if (!k || is_control(cp))
			return false;
		i += k;
	}
	return true;
}

char *tt_emit_clean(const char *s, size_t n)
{
	size_t len = clean(NULL, s, n);
	char *out = tt_xrealloc(NULL, len + 1);

	clean(out, s, n);
	out[len] = '\0';
	return out;
}

void tt_emit_text(FILE *f, const char *s)
{
	size_t n = strlen(s);

	if (tt_emit_is_clean(s, n)) {
		fputs(s, f);
	} else {
		char *c = tt_emit_clean(s, n);

		fputs(c, f);
		free(c);
	}
}

/* JSON string contents of s: RFC 8259 escapes; ill-formed UTF-8 becomes
 * U+FFFD (clean()'s rule), so the output is valid UTF-8 whatever s holds. */
static size_t json_escape(char *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0, left = strlen(s);

	while (left) {
		unsigned char c = *p;
		uint32_t cp;
		size_t k;

		if (c == '"' || c == '\\') {
			if (out) {
				out[n] = '\\';
				out[n + 1] = (char)c;
			}
			n += 2;
			k = 1;
		} else if (c < 0x20) {
			if (out) {
				memcpy(out + n, "\\u00", 4);
				out[n + 4] = hex[c >> 4];
				out[n + 5] = hex[c & 15];
			}
			n += 6;
			k = 1;
		} else if ((k = utf8_next(p, left, &cp)) != 0) {
			if (out)
				memcpy(out + n, p, k);
			n += k;
		} else {
			if (out)
				memcpy(out + n, replacement, 3);
			n += 3;
			k = 1;
		}
		p += k;
		left -= k;
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

bool tt_emit_csv_formula(const char *s)
{
	return s[0] && strchr("=+-@\t\r", s[0]) != NULL;
}

void tt_emit_csv_str(FILE *f, const char *s)
{
	size_t n = strlen(s);
	char *c = tt_emit_is_clean(s, n) ? NULL : tt_emit_clean(s, n);
	const char *p = c ? c : s;
	const char *guard = tt_emit_csv_formula(p) ? "'" : "";

	/* RFC 4180: a field with a comma, a quote or a line break is quoted,
	 * its quotes doubled. (A clean name has no line break; a message may.)
	 * A text that a spreadsheet would run as a formula starts with '. */
	if (!strpbrk(p, ",\"\r\n")) {
		fputs(guard, f);
		fputs(p, f);
	} else {
		fputc('"', f);
		fputs(guard, f);
		for (; *p; p++) {
			if (*p == '"')
				fputc('"', f);
			fputc(*p, f);
		}
		fputc('"', f);
	}
	free(c);
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
	const unsigned char *p = (const unsigned char *)s;
	size_t w = 0, left = strlen(s);

	/* One column per code point, and per byte that tt_emit_text() replaces. */
	while (left) {
		uint32_t cp;
		size_t k = utf8_next(p, left, &cp);

		k = k ? k : 1;
		p += k;
		left -= k;
		w++;
	}
	return w;
}

void tt_emit_pad(FILE *f, const char *s, size_t width, bool right)
{
	size_t w = tt_emit_width(s);

	if (right)
		for (; w < width; w++)
			fputc(' ', f);
	tt_emit_text(f, s);
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
	o->cap = sizeof(o->own);
	o->buf = o->own;
	o->flush_hook = NULL;
	o->hook_ctx = NULL;
}

void tt_out_flush(struct tt_out *o)
{
	size_t off = 0;

	if (o->flush_hook) {
		o->flush_hook(o);
		return;
	}

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
		size_t room = o->cap - o->len, k = n < room ? n : room;

		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
		if (o->len == o->cap)
			tt_out_flush(o);
	}
}

/* "00" to "99": two digits a division (chrome writes three numbers an activation). */
static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
				     "25262728293031323334353637383940414243444546474849"
				     "50515253545556575859606162636465666768697071727374"
				     "75767778798081828384858687888990919293949596979899";

size_t tt_emit_u64(char *p, uint64_t v)
{
	size_t n = 1;
	char *q;

	for (uint64_t t = v; t >= 10; t /= 10)
		n++;
	q = p + n;
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		*--q = digit_pairs[d + 1];
		*--q = digit_pairs[d];
	}
	if (v >= 10) {
		*--q = digit_pairs[v * 2 + 1];
		*--q = digit_pairs[v * 2];
	} else {
		*--q = (char)('0' + v);
	}
	return n;
}

int tt_emit_open_output(const char *out_path, const char *in_path, char *msg, size_t msg_bytes)
{
	struct stat in, out;
	bool have_in = stat(in_path, &in) == 0;
	int fd;

	/* No O_TRUNC: the file is compared with the input first, by what it
	 * is (st_dev, st_ino), so that another path, a hard link or a symbolic
	 * link to the trace is caught as well as the same name. */
	fd = open(out_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(msg, msg_bytes, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &out) != 0) {
		snprintf(msg, msg_bytes, "cannot open: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (have_in && out.st_dev == in.st_dev && out.st_ino == in.st_ino) {
		snprintf(msg, msg_bytes, "is the input trace %s; refusing to overwrite it",
			 in_path);
		close(fd);
		return -2;
	}
	if (S_ISREG(out.st_mode) && ftruncate(fd, 0) != 0) {
		snprintf(msg, msg_bytes, "cannot truncate: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}
