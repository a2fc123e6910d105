/* SPDX-License-Identifier: MIT */
/*
 * cxxname.c - the name of a C++ TRACE_SCOPE() site (rec(3), "Names"): the
 * compiler's __PRETTY_FUNCTION__ ("virtual int ns::A<T>::run(int) const [with
 * T = long]") without the signature's noise: no return type, parameters or
 * qualifiers; the class, namespaces and template arguments kept
 * ("ns::A<T>::run [with T = long]"), so that A::run and B::run, or two
 * instances of one template, are different scopes. Runs once per site, at
 * registration (site.c), on the compiler's own text: no allocation, no
 * library call a signal handler may not make.
 */
#include "rec_internal.h"

#include <string.h>

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Whether s[0..n) ends with the word w (after a space, or the whole text). */
static int ends_with_word(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);

	return n >= k && memcmp(s + n - k, w, k) == 0 && (n == k || !is_ident(s[n - k - 1]));
}

/* Index of the bracket that opens the one closing at s[end], or SIZE_MAX. */
static size_t opening(const char *s, size_t end, char open, char close)
{
	size_t depth = 0;

	for (size_t i = end + 1; i-- > 0;) {
		if (s[i] == close)
			depth++;
		else if (s[i] == open && --depth == 0)
			return i;
	}
	return SIZE_MAX;
}

/*
 * Start of the qualified name that ends at s[end) (exclusive): back to the
 * last space outside brackets. An operator's name (operator<, operator(),
 * operator int) is scanned from its keyword: its symbol is not a bracket.
 */
static size_t name_start(const char *s, size_t end)
{
	size_t depth = 0, i, kw = SIZE_MAX;

	for (i = 0; i + 8 <= end; i++)
		if (memcmp(s + i, "operator", 8) == 0 && (i == 0 || !is_ident(s[i - 1])) &&
		    (i + 8 == end || !is_ident(s[i + 8])))
			kw = i; /* the last such keyword: scan back from there */
	if (kw != SIZE_MAX)
		end = kw;
	for (i = end; i-- > 0;) {
		switch (s[i]) {
		case ')': case ']': case '>':
			depth++;
			break;
		case '(': case '[': case '<':
			if (depth)
				depth--;
			break;
		case ' ':
			if (!depth)
				return i + 1;
			break;
		default:
			break;
		}
	}
	return 0;
}

size_t rec__cxx_name(const char *pretty, char *out, size_t cap)
{
	size_t n = strlen(pretty), end, start, tail = n, tail_len = 0, len;

	if (!cap)
		return 0;
	/* " [with T = int]" (gcc) or " [T = int]" (clang): kept. */
	if (n && pretty[n - 1] == ']') {
		size_t o = opening(pretty, n - 1, '[', ']');

		if (o != SIZE_MAX && o > 0 && pretty[o - 1] == ' ') {
			tail = o - 1;
			tail_len = n - tail;
		}
	}
	end = tail;
	/* Qualifiers after the parameters. */
	for (;;) {
		while (end && pretty[end - 1] == ' ')
			end--;
		if (ends_with_word(pretty, end, "const"))
			end -= 5;
		else if (ends_with_word(pretty, end, "volatile"))
			end -= 8;
		else if (ends_with_word(pretty, end, "noexcept"))
			end -= 8;
		else if (end && pretty[end - 1] == '&')
			end--;
		else
			break;
	}
	/* The parameters, unless the name is not a function's (a lambda's
	 * "<lambda()>" in gcc ends with '>'). */
	if (end && pretty[end - 1] == ')') {
		size_t o = opening(pretty, end - 1, '(', ')');

		if (o != SIZE_MAX && o > 0)
			end = o;
	}
	start = name_start(pretty, end);
	len = end - start;
	if (len + tail_len >= cap)
		len = len >= cap ? cap - 1 : len;
	memcpy(out, pretty + start, len);
	if (tail_len && len + tail_len < cap) {
		memcpy(out + len, pretty + tail, tail_len);
		len += tail_len;
	}
	out[len] = '\0';
	return len;
}
