/* SPDX-License-Identifier: MIT */
/*
 * compile_disabled.c - built with -DREC_DISABLE and WITHOUT librec: every
 * macro and API call must compile away, arguments unevaluated (the
 * annotations' too), and the program must link and run with nothing to link.
 */
#include <rec.h>
#include <stdio.h>

static int evaluated;

__attribute__((unused)) static const char *name(void)
{
	evaluated = 1;
	return "x";
}

static int nr_evaluated;

__attribute__((unused)) static int value(void)
{
	nr_evaluated++;
	return 1;
}

int main(void)
{
	int only_traced = 3; /* used only in macros: no unused-variable warning */

	TRACE_SCOPE();
	TRACE_SCOPE_NAMED(name());
	/* Annotations (rec(3), REC_DISABLE): no argument evaluated. */
	TRACE_VALUE("v", value());
	TRACE_VALUE("d", value() * 0.5);
	TRACE_VALUE("t", only_traced);
	TRACE_INSTANT("i");
	TRACE_MESSAGE(name());
	TRACE_ARG("a", value());
	TRACE_FLOW_BEGIN("f", value());
	TRACE_FLOW_STEP("f", nr_evaluated++);
	TRACE_FLOW_END("f", value());
	if (nr_evaluated)
		TRACE_INSTANT("no braces");
	else
		TRACE_VALUE("no braces", value());
	rec_thread_name("main");
	if (rec_start(NULL) || rec_flush() || rec_stop() || evaluated || nr_evaluated) {
		puts("FAIL");
		return 1;
	}
	puts("ok");
	return 0;
}
