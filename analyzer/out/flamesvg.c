/* SPDX-License-Identifier: MIT */
/*
 * flamesvg.c - see flamesvg.h. The stacks are sorted frame by frame, which
 * puts every path right after its prefixes and the children of one frame
 * next to each other, so one merge with a stack of open frames builds the
 * tree in pre-order (the way flamegraph.pl reads sorted folded lines). Then
 * inclusive values bottom-up, the narrow-frame rule, x offsets, and the SVG:
 * static geometry for viewers without scripts, and a script that redraws it
 * on zoom and highlights on search. docs/ANALYZER.md, "flame graph (SVG)".
 */
#include "out/flamesvg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/emit.h"

/* Geometry, in px. */
#define IMAGE_W 1200.0
#define PAD 10.0
#define FRAME_H 16
#define TOP_H 60      /* title, buttons */
#define BOTTOM_H 34   /* the details line */
#define CHAR_W 7.0    /* of 12 px Verdana, for the labels' fit */
/* Children narrower than this fraction of the total are merged (0.1 px). */
#define NARROW_FRACTION (0.1 / (IMAGE_W - 2 * PAD))

struct node {
	const char *name; /* into the caller's path; NULL for the root */
	uint32_t name_len;
	uint32_t parent, depth;
	uint64_t self, total, calls, x;
	bool has_calls;
	bool hidden; /* narrow, or above a narrow frame */
	uint64_t narrow_total; /* of its narrow children, drawn as one frame */
	uint64_t narrow_x;     /* where that frame starts */
	uint32_t nr_narrow;
};

struct tree {
	struct node *v;
	size_t n, cap;
};

static int frame_byte(const char *p)
{
	return *p == ';' ? 0 : *p ? (unsigned char)*p + 1 : -1;
}

/* Frame by frame: ';' sorts below every byte, the end below ';'. */
static int cmp_stack(const void *pa, const void *pb)
{
	const char *a = (*(const struct tt_flame_frame *const *)pa)->path;
	const char *b = (*(const struct tt_flame_frame *const *)pb)->path;

	for (;; a++, b++) {
		int ca = frame_byte(a), cb = frame_byte(b);

		if (ca != cb)
			return ca < cb ? -1 : 1;
		if (ca < 0)
			return 0;
	}
}

static int tree_add(struct tree *t, const char *name, size_t len, uint32_t parent)
{
	struct node *nd;

	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct node *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	nd = &t->v[t->n++];
	memset(nd, 0, sizeof(*nd));
	nd->name = name;
	nd->name_len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	nd->parent = parent;
	nd->depth = name ? t->v[parent].depth + 1 : 0;
	return 0;
}

/* Builds the tree in pre-order from the sorted stacks. */
static int tree_build(struct tree *t, const struct tt_flame_frame *const *s, size_t n)
{
	size_t open_cap = 64, nr_open = 1;
	uint32_t *open = malloc(open_cap * sizeof(*open)); /* open[d]: depth d of the last path */
	int rc;

	if (!open || (rc = tree_add(t, NULL, 0, 0))) {
		free(open);
		return -ENOMEM;
	}
	open[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const char *p = s[i]->path ? s[i]->path : "";
		size_t depth = 0;
		uint32_t last = 0;

		/* "a;b" is frames a, b; "a;" ends with an empty frame; "" has none. */
		while (*p || depth) {
			const char *end = strchr(p, ';');
			size_t len = end ? (size_t)(end - p) : strlen(p);

			if (++depth == open_cap) {
				uint32_t *v = realloc(open, 2 * open_cap * sizeof(*v));

				if (!v) {
					free(open);
					return -ENOMEM;
				}
				open = v;
				open_cap *= 2;
			}
			/* Sorted frame by frame, a path shares its frames with the
			 * previous one up to where they differ. */
			if (depth >= nr_open || t->v[open[depth]].name_len != len ||
			    memcmp(t->v[open[depth]].name, p, len) != 0) {
				if ((rc = tree_add(t, p, len, open[depth - 1]))) {
					free(open);
					return rc;
				}
				open[depth] = (uint32_t)(t->n - 1);
				nr_open = depth + 1;
			}
			last = open[depth];
			if (!end)
				break;
			p = end + 1;
		}
		nr_open = depth + 1;
		t->v[last].self += s[i]->self_value;
		t->v[last].calls += s[i]->calls;
		t->v[last].has_calls = true;
	}
	free(open);
	return 0;
}

/* Inclusive values, the narrow rule and x offsets (flamesvg.h). */
static int tree_layout(struct tree *t, uint32_t *max_depth)
{
	uint64_t *cursor = calloc(t->n, sizeof(*cursor)); /* width used by children */
	double limit;

	if (!cursor)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		t->v[i].total = t->v[i].self;
	for (size_t i = t->n; i-- > 1;)
		t->v[t->v[i].parent].total += t->v[i].total;
	limit = (double)t->v[0].total * NARROW_FRACTION;
	*max_depth = 0;
	for (size_t i = 1; i < t->n; i++) {
		struct node *nd = &t->v[i], *p = &t->v[nd->parent];

		if (p->hidden) {
			nd->hidden = true;
		} else if (!nd->total || (double)nd->total < limit) {
			nd->hidden = true;
			p->narrow_total += nd->total;
			p->nr_narrow++;
		}
	}
	/* Visible children left to right in name order from the parent's x,
	 * the merged narrow frame after them, the parent's own part last. */
	for (size_t i = 1; i < t->n; i++) {
		struct node *nd = &t->v[i];

		if (nd->hidden)
			continue;
		nd->x = t->v[nd->parent].x + cursor[nd->parent];
		cursor[nd->parent] += nd->total;
		*max_depth = nd->depth > *max_depth ? nd->depth : *max_depth;
	}
	for (size_t i = 0; i < t->n; i++) {
		struct node *nd = &t->v[i];

		nd->narrow_x = nd->x + cursor[i];
		if (nd->hidden || !nd->nr_narrow)
			continue;
		if (!nd->narrow_total || (double)nd->narrow_total < limit)
			nd->nr_narrow = 0; /* too narrow even merged: the parent's own part */
		else if (nd->depth + 1 > *max_depth)
			*max_depth = nd->depth + 1;
	}
	free(cursor);
	return 0;
}

/*
 * Writes bytes [s, s + len) as XML text: valid UTF-8 passes, invalid bytes,
 * control characters and the code points XML 1.0 forbids (U+FFFE, U+FFFF)
 * become U+FFFD, markup characters are escaped. At
 * most max_cp code points (SIZE_MAX: all). Return: code points written.
 */
static size_t put_xml(FILE *out, const char *s, size_t len, size_t max_cp)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + len;
	size_t cp = 0;

	while (p < e && cp < max_cp) {
		unsigned c = *p;
		size_t k = 0;

		if (c < 0x80) {
			switch (c) {
			case '&': fputs("&amp;", out); break;
			case '<': fputs("&lt;", out); break;
			case '>': fputs("&gt;", out); break;
			case '"': fputs("&quot;", out); break;
			case '\'': fputs("&#39;", out); break;
			default:
				if (c < 0x20 || c == 0x7f)
					fputs("\xEF\xBF\xBD", out);
				else
					fputc((int)c, out);
			}
			p++;
			cp++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
			k = 2;
		else if (c >= 0xE0 && c <= 0xEF)
			k = 3;
		else if (c >= 0xF0 && c <= 0xF4)
			k = 4;
		if (k && (size_t)(e - p) >= k) {
			unsigned lo = 0x80, hi = 0xBF;
			bool ok = true;

			if (c == 0xE0)
				lo = 0xA0;
			else if (c == 0xED)
				hi = 0x9F;
			else if (c == 0xF0)
				lo = 0x90;
			else if (c == 0xF4)
				hi = 0x8F;
			ok = p[1] >= lo && p[1] <= hi;
			for (size_t j = 2; ok && j < k; j++)
				ok = p[j] >= 0x80 && p[j] <= 0xBF;
			/* C1 controls (U+0080-U+009F) are not for a picture either;
			 * U+FFFE and U+FFFF are not XML 1.0 characters (its Char
			 * production: surrogates and C0 but tab, LF and CR are
			 * out too, replaced above), so a reader would reject the
			 * file. */
			if (ok) {
				/* A well-formed sequence: one code point, kept or
				 * replaced whole (as nr_code_points() counts it). */
				if ((c == 0xC2 && p[1] < 0xA0) ||
				    (c == 0xEF && p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF)))
					fputs("\xEF\xBF\xBD", out);
				else
					fwrite(p, 1, k, out);
				p += k;
				cp++;
				continue;
			}
		}
		fputs("\xEF\xBF\xBD", out);
		p++;
		cp++;
	}
	return cp;
}

/* Code points put_xml() would write for [s, s + len). */
static size_t nr_code_points(const char *s, size_t len)
{
	size_t cp = 0;

	for (size_t i = 0; i < len; i++)
		cp += ((unsigned char)s[i] & 0xC0) != 0x80;
	return cp;
}

static void put_value(FILE *out, uint64_t v, const char *unit)
{
	char buf[32];

	if (strcmp(unit, "ns") == 0) {
		tt_emit_fmt_duration(buf, sizeof(buf), v);
		fputs(buf, out);
	} else {
		fprintf(out, "%" PRIu64 " ", v);
		put_xml(out, unit, strlen(unit), SIZE_MAX);
	}
}

/* FNV-1a: a name's colour is the same in every graph. */
static uint64_t name_hash(const char *s, size_t len)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

static const char script[] =
	"var svg, frames, details, matchedtxt, unzoombtn, searchbtn, W, PAD, total, searching = null;\n"
	"function init(evt) {\n"
	"  svg = document.documentElement;\n"
	"  frames = document.getElementById('frames');\n"
	"  details = document.getElementById('details');\n"
	"  matchedtxt = document.getElementById('matched');\n"
	"  unzoombtn = document.getElementById('unzoom');\n"
	"  searchbtn = document.getElementById('search');\n"
	"  W = +svg.getAttribute('data-width'); PAD = +svg.getAttribute('data-pad');\n"
	"  total = +svg.getAttribute('data-total');\n"
	"  frames.addEventListener('mouseover', function (e) {\n"
	"    var g = frame_of(e.target); if (g) details.textContent = tip(g); });\n"
	"  frames.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"  frames.addEventListener('click', function (e) {\n"
	"    var g = frame_of(e.target); if (g) zoom(g); });\n"
	"  unzoombtn.addEventListener('click', unzoom);\n"
	"  searchbtn.addEventListener('click', search_prompt);\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if ((e.ctrlKey || e.metaKey) && e.keyCode === 70) { e.preventDefault(); search_prompt(); }\n"
	"  });\n"
	"  var q = new URLSearchParams(document.location.search);\n"
	"  if (q.get('z')) zoom_to(q.get('z'));\n"
	"  if (q.get('s')) search(q.get('s'));\n"
	"}\n"
	"function frame_of(n) { while (n && n.parentNode !== frames) n = n.parentNode; return n; }\n"
	"function tip(g) { return g.getElementsByTagName('title')[0].textContent; }\n"
	"function name_of(g) { var t = tip(g), i = t.lastIndexOf(' ('); return i < 0 ? t : t.substring(0, i); }\n"
	"function num(g, a) { return +g.getAttribute(a); }\n"
	"function label(t, name, pw) {\n"
	"  var n = Math.floor((pw - 6) / 7), cp = Array.from(name);\n"
	"  t.textContent = n < 3 ? '' : cp.length <= n ? name : cp.slice(0, n - 2).join('') + '..';\n"
	"}\n"
	"function place(f, px, pw) {\n"
	"  var r = f.getElementsByTagName('rect')[0], t = f.getElementsByTagName('text')[0];\n"
	"  r.setAttribute('x', px.toFixed(1)); r.setAttribute('width', Math.max(pw, 0).toFixed(1));\n"
	"  t.setAttribute('x', (px + 3).toFixed(1)); label(t, name_of(f), pw);\n"
	"}\n"
	"function zoom(g) {\n"
	"  var x = num(g, 'data-x'), w = num(g, 'data-w'), d = num(g, 'data-d'), c = frames.children;\n"
	"  if (!(w > 0)) return;\n"
	"  for (var i = 0; i < c.length; i++) {\n"
	"    var f = c[i], fx = num(f, 'data-x'), fw = num(f, 'data-w'), fd = num(f, 'data-d'), show;\n"
	"    if (fd < d) {\n"
	"      show = fx <= x && fx + fw >= x + w;\n"
	"      if (show) place(f, PAD, W - 2 * PAD);\n"
	"    } else {\n"
	"      show = fx >= x && fx < x + w;\n"
	"      if (show) place(f, PAD + (fx - x) / w * (W - 2 * PAD), fw / w * (W - 2 * PAD));\n"
	"    }\n"
	"    f.style.display = show ? '' : 'none';\n"
	"    f.setAttribute('class', show && fd < d ? 'f p' : 'f');\n"
	"  }\n"
	"  if (d > 0) unzoombtn.setAttribute('class', 'btn'); else unzoombtn.setAttribute('class', 'btn hide');\n"
	"  svg.setAttribute('data-zoom', name_of(g));\n"
	"}\n"
	"function unzoom() { zoom(frames.children[0]); }\n"
	"function zoom_to(term) {\n"
	"  var re, c = frames.children, best = null;\n"
	"  try { re = new RegExp(term); } catch (e) { return; }\n"
	"  for (var i = 1; i < c.length; i++)\n"
	"    if (re.test(name_of(c[i])) && (!best || num(c[i], 'data-w') > num(best, 'data-w'))) best = c[i];\n"
	"  if (best) zoom(best);\n"
	"}\n"
	"function search(term) {\n"
	"  var re, c = frames.children, ranges = [], n = 0, sum = 0, end = -1;\n"
	"  try { re = new RegExp(term); } catch (e) { return 0; }\n"
	"  for (var i = 1; i < c.length; i++) {\n"
	"    var f = c[i], r = f.getElementsByTagName('rect')[0];\n"
	"    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
	"    if (re.test(name_of(f))) {\n"
	"      r.setAttribute('fill', 'rgb(230,0,230)'); f.setAttribute('data-hl', '1'); n++;\n"
	"      ranges.push([num(f, 'data-x'), num(f, 'data-x') + num(f, 'data-w')]);\n"
	"    } else {\n"
	"      r.setAttribute('fill', r.getAttribute('data-fill')); f.removeAttribute('data-hl');\n"
	"    }\n"
	"  }\n"
	"  ranges.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  for (var k = 0; k < ranges.length; k++) {\n"
	"    var lo = Math.max(ranges[k][0], end);\n"
	"    if (ranges[k][1] > lo) { sum += ranges[k][1] - lo; end = ranges[k][1]; }\n"
	"  }\n"
	"  matchedtxt.textContent = 'Matched: ' + (total > 0 ? 100 * sum / total : 0).toFixed(1) + '%';\n"
	"  matchedtxt.setAttribute('class', '');\n"
	"  searchbtn.textContent = 'Reset Search'; searching = term;\n"
	"  svg.setAttribute('data-matches', n);\n"
	"  return n;\n"
	"}\n"
	"function reset_search() {\n"
	"  var c = frames.children;\n"
	"  for (var i = 1; i < c.length; i++) {\n"
	"    var r = c[i].getElementsByTagName('rect')[0];\n"
	"    if (r.hasAttribute('data-fill')) r.setAttribute('fill', r.getAttribute('data-fill'));\n"
	"    c[i].removeAttribute('data-hl');\n"
	"  }\n"
	"  matchedtxt.setAttribute('class', 'hide'); searchbtn.textContent = 'Search'; searching = null;\n"
	"  svg.removeAttribute('data-matches');\n"
	"}\n"
	"function search_prompt() {\n"
	"  if (searching !== null) { reset_search(); return; }\n"
	"  var t = prompt('Search for (regular expression):', '');\n"
	"  if (t) search(t);\n"
	"}\n";

static const char style[] =
	"text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
	"#title { text-anchor: middle; font-size: 17px; }\n"
	".btn { cursor: pointer; fill: rgb(0,0,160); }\n"
	".hide { display: none; }\n"
	"#frames g { cursor: pointer; }\n"
	"#frames g:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
	"#frames text { pointer-events: none; }\n"
	".p { opacity: 0.5; }\n";

static void put_frame(FILE *out, const char *name, size_t name_len, uint64_t x, uint64_t w,
		      uint32_t depth, uint64_t calls, bool has_calls, uint64_t total,
		      const char *unit, const char *fill, double height)
{
	double px = PAD + (double)x / (double)total * (IMAGE_W - 2 * PAD);
	double pw = (double)w / (double)total * (IMAGE_W - 2 * PAD);
	double y = height - BOTTOM_H - (double)(depth + 1) * FRAME_H;
	long fit = (long)((pw - 6) / CHAR_W);
	size_t cp = nr_code_points(name, name_len);

	fprintf(out, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\" data-d=\"%u\">",
		x, w, depth);
	fputs("<title>", out);
	put_xml(out, name, name_len, SIZE_MAX);
	fputs(" (", out);
	put_value(out, w, unit);
	fprintf(out, ", %.2f%%", 100.0 * (double)w / (double)total);
	if (has_calls && strcmp(unit, "calls") != 0)
		fprintf(out, ", %" PRIu64 " call%s", calls, calls == 1 ? "" : "s");
	fprintf(out, ")</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" "
		     "rx=\"2\"/><text x=\"%.1f\" y=\"%.1f\">",
		px, y, pw, FRAME_H - 1, fill, px + 3, y + FRAME_H - 4.5);
	if (fit >= 3) {
		if ((size_t)fit >= cp) {
			put_xml(out, name, name_len, SIZE_MAX);
		} else {
			put_xml(out, name, name_len, (size_t)fit - 2);
			fputs("..", out);
		}
	}
	fputs("</text></g>\n", out);
}

int tt_flamesvg_write(FILE *out, const char *title, const struct tt_flame_frame *stacks,
		      size_t n, const char *unit)
{
	const struct tt_flame_frame **sorted = calloc(n + 1, sizeof(*sorted));
	struct tree t = { 0 };
	uint32_t max_depth = 0;
	double height;
	uint64_t total;
	int rc;

	if (!sorted)
		return -ENOMEM;
	unit = unit ? unit : "ns";
	for (size_t i = 0; i < n; i++)
		sorted[i] = &stacks[i];
	if (n)
		qsort(sorted, n, sizeof(*sorted), cmp_stack);
	rc = tree_build(&t, sorted, n);
	free(sorted);
	if (rc)
		goto out;
	if ((rc = tree_layout(&t, &max_depth)))
		goto out;
	total = t.v[0].total;
	height = TOP_H + BOTTOM_H + (double)(max_depth + 1) * FRAME_H;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		     "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" onload=\"init(evt)\" "
		     "data-width=\"%.0f\" data-pad=\"%.0f\" data-total=\"%" PRIu64 "\">\n",
		IMAGE_W, height, IMAGE_W, height, IMAGE_W, PAD, total);
	fprintf(out, "<style type=\"text/css\">\n%s</style>\n", style);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", script);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"rgb(248,248,240)\"/>\n",
		IMAGE_W, height);
	fprintf(out, "<text id=\"title\" x=\"%.0f\" y=\"24\">", IMAGE_W / 2);
	if (title)
		put_xml(out, title, strlen(title), SIZE_MAX);
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"unzoom\" class=\"btn hide\" x=\"%.0f\" y=\"24\">Reset Zoom</text>\n",
		PAD);
	fprintf(out, "<text id=\"search\" class=\"btn\" x=\"%.0f\" y=\"24\" "
		     "style=\"text-anchor: end\">Search</text>\n",
		IMAGE_W - PAD);
	fprintf(out, "<text id=\"matched\" class=\"hide\" x=\"%.0f\" y=\"%.0f\" "
		     "style=\"text-anchor: end\"> </text>\n",
		IMAGE_W - PAD, height - 12);
	fprintf(out, "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n", PAD, height - 12);
	if (!total)
		fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" style=\"text-anchor: middle\">"
			     "no samples</text>\n", IMAGE_W / 2, height / 2);
	fputs("<g id=\"frames\">\n", out);
	if (total) {
		put_frame(out, "all", 3, 0, total, 0, 0, false, total, unit, "rgb(200,200,200)",
			  height);
		for (size_t i = 1; i < t.n; i++) {
			const struct node *nd = &t.v[i];
			uint64_t h = name_hash(nd->name, nd->name_len);
			char fill[32];

			if (nd->hidden)
				continue;
			snprintf(fill, sizeof(fill), "rgb(%u,%u,%u)", 205 + (unsigned)(h % 50),
				 (unsigned)((h >> 8) % 230), (unsigned)((h >> 16) % 55));
			if (nd->name_len)
				put_frame(out, nd->name, nd->name_len, nd->x, nd->total, nd->depth,
					  nd->calls, nd->has_calls, total, unit, fill, height);
			else
				put_frame(out, "[empty]", 7, nd->x, nd->total, nd->depth, nd->calls,
					  nd->has_calls, total, unit, fill, height);
		}
		for (size_t i = 0; i < t.n; i++) {
			const struct node *nd = &t.v[i];
			char name[64];
			int len;

			if (nd->hidden || !nd->nr_narrow)
				continue;
			len = snprintf(name, sizeof(name), "[%u narrow frames]", nd->nr_narrow);
			put_frame(out, name, (size_t)len, nd->narrow_x, nd->narrow_total,
				  nd->depth + 1, 0, false, total, unit, "rgb(190,190,190)", height);
		}
	}
	fputs("</g>\n</svg>\n", out);
	if (fflush(out) || ferror(out))
		rc = -EIO;
out:
	free(t.v);
	return rc;
}
