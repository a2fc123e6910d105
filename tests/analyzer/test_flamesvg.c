/* SPDX-License-Identifier: MIT */
/*
 * test_flamesvg.c - analyzer/out/flamesvg.c through the static library: the
 * frames drawn and their exact widths and offsets, tooltips, colour by name,
 * escaping and U+FFFD, duplicate, empty and odd paths, the narrow-frame
 * rule that bounds the output, and a write error. Rendering in a browser is
 * check_flamesvg_browser.sh.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/flamesvg.h"

static char *render(const struct tt_flame_frame *v, size_t n, const char *unit, size_t *bytes)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(f);
	cr_assert_eq(tt_flamesvg_write(f, "t", v, n, unit), 0);
	fclose(f);
	if (bytes)
		*bytes = len;
	return buf;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* The <g> of the frame whose tooltip starts with title, copied; NULL if none. */
static char *frame(const char *svg, const char *title)
{
	static char buf[4096];
	char key[512];
	const char *p, *g, *end;

	snprintf(key, sizeof(key), "<title>%s", title);
	p = strstr(svg, key);
	if (!p)
		return NULL;
	for (g = p; g > svg && strncmp(g, "<g class=\"f\"", 12) != 0; g--)
		;
	end = strstr(p, "</g>");
	cr_assert(end);
	snprintf(buf, sizeof(buf), "%.*s", (int)(end - g), g);
	return buf;
}

Test(flamesvg, frames_have_exact_widths_offsets_and_tooltips)
{
	const struct tt_flame_frame v[] = {
		{ "main;solve", 600, 2 },
		{ "main;parse", 300, 3 },
		{ "main", 100, 1 },
		{ "idle", 0, 5 }, /* no value: not drawn */
	};
	char *svg = render(v, 4, "ns", NULL), *g;

	cr_assert_eq(count(svg, "<g class=\"f\""), 4, "%s", svg); /* all, main, parse, solve */
	cr_assert(strstr(svg, "data-total=\"1000\""));
	g = frame(svg, "all (");
	cr_assert(g && strstr(g, "data-x=\"0\" data-w=\"1000\" data-d=\"0\""), "%s", g);
	g = frame(svg, "main (");
	cr_assert(g && strstr(g, "<title>main (1.00µs, 100.00%, 1 call)</title>"), "%s", g);
	/* Children by name: parse first, then solve; main's own 100 last. */
	g = frame(svg, "parse (");
	cr_assert(g && strstr(g, "data-x=\"0\" data-w=\"300\" data-d=\"2\""), "%s", g);
	cr_assert(strstr(g, "<title>parse (300ns, 30.00%, 3 calls)</title>"), "%s", g);
	cr_assert(strstr(g, "<rect x=\"10.0\" y=\"60.0\" width=\"354.0\""), "%s", g);
	g = frame(svg, "solve (");
	cr_assert(g && strstr(g, "data-x=\"300\" data-w=\"600\" data-d=\"2\""), "%s", g);
	cr_assert(strstr(g, "<rect x=\"364.0\" y=\"60.0\" width=\"708.0\""), "%s", g);
	cr_assert_null(frame(svg, "idle"));
	/* Self-contained: no external reference of any kind. */
	cr_assert_null(strstr(svg, "href"));
	cr_assert_null(strstr(svg, "http://www.w3.org/1999/xlink"));
	cr_assert_eq(count(svg, "http"), 1, "only the SVG namespace"); /* xmlns */
	cr_assert(strstr(svg, "<script type=\"text/ecmascript\"><![CDATA["));
	free(svg);
}

Test(flamesvg, same_name_same_colour_and_recursion_is_kept)
{
	const struct tt_flame_frame v[] = {
		{ "a;fib;fib;fib", 10, 1 },
		{ "b;fib", 20, 2 },
	};
	char *svg = render(v, 2, "ns", NULL), fill[2][64];
	const char *p;

	cr_assert_eq(count(svg, "<title>fib ("), 4);
	p = strstr(frame(svg, "fib (20ns"), "fill=\"");
	snprintf(fill[0], sizeof(fill[0]), "%.*s", (int)strcspn(p, " "), p);
	p = strstr(frame(svg, "fib (10ns, 33.33%, 1 call)"), "fill=\"");
	snprintf(fill[1], sizeof(fill[1]), "%.*s", (int)strcspn(p, " "), p);
	cr_assert_str_eq(fill[0], fill[1]);
	cr_assert_eq(count(svg, fill[0]), 4);
	free(svg);
}

Test(flamesvg, names_are_escaped_and_invalid_utf8_becomes_replacement)
{
	const struct tt_flame_frame v[] = {
		{ "<a>&\"b'", 10, 1 },
		{ "bad\xff\xfe;ctl\x01x;ok\xc3\xa9;half\xe2\x82", 10, 1 },
		{ "over\xc0\xaf;sur\xed\xa0\x80", 10, 1 },
	};
	char *svg = render(v, 3, "ns", NULL);

	cr_assert(strstr(svg, "<title>&lt;a&gt;&amp;&quot;b&#39; ("), "%s", svg);
	cr_assert(strstr(svg, "<title>bad\xEF\xBF\xBD\xEF\xBF\xBD ("));
	cr_assert(strstr(svg, "<title>ctl\xEF\xBF\xBDx ("));
	cr_assert(strstr(svg, "<title>ok\xc3\xa9 ("));
	cr_assert(strstr(svg, "<title>half\xEF\xBF\xBD\xEF\xBF\xBD ("));
	cr_assert(strstr(svg, "<title>over\xEF\xBF\xBD\xEF\xBF\xBD ("));
	cr_assert(strstr(svg, "<title>sur\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD ("));
	for (const unsigned char *p = (const unsigned char *)svg; *p; p++)
		cr_assert(*p >= 0x20 || *p == '\n', "control byte %#x", *p);
	free(svg);
}

Test(flamesvg, duplicate_paths_add_and_odd_paths_are_drawn)
{
	const struct tt_flame_frame v[] = {
		{ "a;b", 10, 1 }, { "a;b", 5, 2 }, { "a;", 7, 1 }, { "", 3, 0 }, { "a;b-c", 1, 1 },
	};
	char *svg = render(v, 5, "calls", NULL), *g;

	g = frame(svg, "b (");
	cr_assert(g && strstr(g, "<title>b (15 calls, 57.69%)</title>"), "%s", svg);
	cr_assert(strstr(svg, "<title>[empty] (7 calls,"));
	cr_assert(strstr(svg, "<title>b-c (1 calls,"));
	cr_assert(strstr(frame(svg, "all ("), "data-w=\"26\""));
	cr_assert(strstr(frame(svg, "a ("), "data-w=\"23\""));
	cr_assert_eq(count(svg, "<title>b ("), 1);
	free(svg);
}

/*
 * 200 000 paths of value 1 beside one of 10^9: each is far under 0.1 px, so
 * they are one "[200000 narrow frames]" frame and the output stays small;
 * widths still add up (the merged frame holds their sum).
 */
Test(flamesvg, narrow_frames_merge_so_the_output_is_bounded)
{
	enum { N = 200000 };
	struct tt_flame_frame *v = calloc(N + 1, sizeof(*v));
	char (*names)[32] = calloc(N, sizeof(*names));
	size_t bytes;
	char *svg, *g;

	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "root;f%zu;g", i);
		v[i] = (struct tt_flame_frame){ names[i], 1, 1 };
	}
	v[N] = (struct tt_flame_frame){ "root;big", 1000000000, 1 };
	svg = render(v, N + 1, "ns", &bytes);
	cr_assert_eq(count(svg, "<g class=\"f\""), 4, "all, root, big, merged");
	g = frame(svg, "[200000 narrow frames] (");
	cr_assert(g, "no merged frame");
	cr_assert(strstr(g, "data-x=\"1000000000\" data-w=\"200000\" data-d=\"2\""), "%s", g);
	cr_assert_lt(bytes, 16000);
	free(svg);

	/* A tenth of them are too narrow even merged: the parent keeps them. */
	v[N].self_value = 100000000000ull;
	svg = render(v, N + 1, "ns", NULL);
	cr_assert_eq(count(svg, "<g class=\"f\""), 3);
	cr_assert(strstr(frame(svg, "root ("), "data-w=\"100000200000\""));
	free(svg);
	free(v);
	free(names);
}

Test(flamesvg, nothing_to_draw_is_still_a_picture)
{
	char *svg = render(NULL, 0, "ns", NULL);

	cr_assert(strstr(svg, "no samples"));
	cr_assert(strstr(svg, "</svg>"));
	free(svg);
}

Test(flamesvg, write_error_is_eio)
{
	const struct tt_flame_frame v[] = { { "a", 1, 1 } };
	FILE *f = fopen("/dev/full", "w");

	cr_assert(f);
	cr_assert_eq(tt_flamesvg_write(f, "t", v, 1, "ns"), -EIO);
	fclose(f);
}
