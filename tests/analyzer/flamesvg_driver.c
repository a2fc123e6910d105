/* SPDX-License-Identifier: MIT */
/*
 * flamesvg_driver.c - a test driver for analyzer/out/flamesvg.c until and
 * besides `tracetool flame --format=svg`: reads folded stacks from FILE
 * (lines "a;b;c VALUE" or "a;b;c VALUE CALLS") and writes the SVG to stdout.
 * Used by check_flamesvg_browser.sh.
 *   usage: flamesvg_driver FILE [UNIT] [TITLE]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/flamesvg.h"

int main(int argc, char **argv)
{
	struct tt_flame_frame *v = NULL;
	size_t n = 0, cap = 0, len = 0;
	char *line = NULL;
	FILE *f;
	int rc;

	if (argc < 2 || !(f = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: flamesvg_driver FILE [UNIT] [TITLE]\n");
		return 2;
	}
	while (getline(&line, &len, f) > 0) {
		char *sp, *end;
		uint64_t a, b = 0;

		line[strcspn(line, "\n")] = '\0';
		sp = strrchr(line, ' ');
		if (!sp)
			continue;
		a = strtoull(sp + 1, &end, 10);
		*sp = '\0';
		/* Two numbers: VALUE CALLS. */
		char *sp2 = strrchr(line, ' ');
		if (sp2) {
			char *end2;
			uint64_t x = strtoull(sp2 + 1, &end2, 10);

			if (*end2 == '\0' && end2 != sp2 + 1) {
				b = a;
				a = x;
				*sp2 = '\0';
			}
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				return 1;
		}
		v[n].path = strdup(line);
		v[n].self_value = a;
		v[n].calls = b;
		n++;
	}
	free(line);
	fclose(f);
	rc = tt_flamesvg_write(stdout, argc > 3 ? argv[3] : "Flame Graph", v, n,
			       argc > 2 ? argv[2] : "ns");
	for (size_t i = 0; i < n; i++)
		free((char *)v[i].path);
	free(v);
	return rc ? 1 : 0;
}
