/* SPDX-License-Identifier: MIT */
/*
 * test_emit.c - analyzer/common/emit.h's one sanitizer of names, called directly:
 * well-formed UTF-8 is kept byte for byte; each byte of an ill-formed
 * sequence and each control character becomes U+FFFD (docs/ANALYZER.md,
 * "Hostile files"); JSON and CSV writers keep their output valid UTF-8 and
 * quote as RFC 8259 and RFC 4180 say; display widths count what is shown.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/emit.h"

TestSuite(emit, .timeout = 60);

#define R "\xef\xbf\xbd" /* U+FFFD */

struct clean_case {
	const char *in;
	size_t in_bytes;
	const char *out;
};

#define CASE(in, out) { in, sizeof(in) - 1, out }

static const struct clean_case cases[] = {
	CASE("plain", "plain"),
	CASE("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5"),
	CASE("\xef\xbf\xbd", R), /* U+FFFD itself is kept */
	CASE("bad\xff\xfe", "bad" R R),
	CASE("\x80\xbf", R R),		     /* lone continuation bytes */
	CASE("\xc0\xaf", R R),		     /* overlong '/' */
	CASE("\xc1\xbf", R R),		     /* overlong, 2 bytes */
	CASE("\xe0\x80\xaf", R R R),	     /* overlong, 3 bytes */
	CASE("\xf0\x80\x80\xaf", R R R R),   /* overlong, 4 bytes */
	CASE("\xed\xa0\x80", R R R),	     /* surrogate U+D800 */
	CASE("\xed\x9f\xbf", "\xed\x9f\xbf"), /* U+D7FF, just below */
	CASE("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"), /* U+10FFFF */
	CASE("\xf4\x90\x80\x80", R R R R),   /* above U+10FFFF */
	CASE("\xf5\x80\x80\x80", R R R R),
	CASE("cut\xe2\x82", "cut" R R),	     /* cut short at the end */
	CASE("cut\xe2\x82x", "cut" R R "x"), /* cut short before ASCII */
	CASE("\x1b[31m", R "[31m"),
	CASE("a\tb\nc\rd", "a" R "b_c_d"),
	CASE("del\x7f", "del" R),
	CASE("csi\xc2\x9b", "csi" R),	     /* C1, well-formed */
	CASE("nbsp\xc2\xa0", "nbsp\xc2\xa0"), /* first after C1: kept */
	CASE("a\0b", "a" R "b"),
};

/* One loop with cr_expect, which reports every failing case: Criterion's
 * parameters would be copied into a process where these string pointers
 * (PIE, ASLR) are not valid. */
Test(emit, clean_replaces_ill_formed_bytes_and_controls)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct clean_case *c = &cases[i];
		char *out = tt_emit_clean(c->in, c->in_bytes);
		bool same = strlen(c->in) == c->in_bytes && strcmp(c->in, c->out) == 0;

		cr_expect_str_eq(out, c->out, "case %zu", i);
		cr_expect_eq(tt_emit_is_clean(c->in, c->in_bytes), same, "case %zu", i);
		cr_expect(tt_emit_is_clean(out, strlen(out)), "case %zu: the clean form is clean", i);
		free(out);
	}
}

static char *capture(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	fn(f, s);
	fclose(f);
	return buf;
}

Test(emit, json_escapes_controls_and_replaces_ill_formed_bytes)
{
	char *s = capture(tt_emit_json_str, "q\"\\\x01\xff\xc3\xa9");

	cr_assert_str_eq(s, "\"q\\\"\\\\\\u0001" R "\xc3\xa9\"");
	free(s);
}

Test(emit, csv_quotes_whole_field_and_doubles_quotes)
{
	char *s = capture(tt_emit_csv_str, "a,b_total");

	cr_assert_str_eq(s, "\"a,b_total\"");
	free(s);
	s = capture(tt_emit_csv_str, "say \"hi\"\xff");
	cr_assert_str_eq(s, "\"say \"\"hi\"\"" R "\"");
	free(s);
	s = capture(tt_emit_csv_str, "plain");
	cr_assert_str_eq(s, "plain");
	free(s);
}

Test(emit, table_text_and_width_count_what_is_shown)
{
	char *s = capture(tt_emit_text, "\x1b[2J\xff\xc3\xa9");

	cr_assert_str_eq(s, R "[2J" R "\xc3\xa9");
	free(s);
	cr_assert_eq(tt_emit_width("\x1b[2J\xff\xc3\xa9"), 6);
	cr_assert_eq(tt_emit_width("\x80\x80"), 2); /* each shown as U+FFFD */
}
