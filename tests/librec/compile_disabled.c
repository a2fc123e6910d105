/* SPDX-License-Identifier: MIT */
/*
 * compile_disabled.c - built with -DREC_DISABLE and WITHOUT librec: every
 * macro and API call must compile away, arguments unevaluated, and the
 * program must link and run with nothing to link.
 */
#include <rec.h>
#include <stdio.h>

static int evaluated;

__attribute__((unused)) static const char *name(void)
{
	evaluated = 1;
	return "x";
}

int main(void)
{
	TRACE_SCOPE();
	TRACE_SCOPE_NAMED(name());
	rec_thread_name("main");
	if (rec_start(NULL) || rec_flush() || rec_stop() || evaluated) {
		puts("FAIL");
		return 1;
	}
	puts("ok");
	return 0;
}
