/* SPDX-License-Identifier: MIT */
/* compile_header.c - rec.h alone, compiled warning-free in several modes by meson. */
#include <rec.h>

int rec_compile_check(void);
int rec_compile_check(void)
{
	TRACE_SCOPE();
	{
		TRACE_SCOPE_NAMED("inner");
		TRACE_SCOPE_NAMED("same line"); TRACE_SCOPE_NAMED("twice");
	}
	return (int)rec_version();
}

/* Every annotation macro, with every arithmetic type TRACE_VALUE takes. */
int rec_compile_annots(const char *text, int n, unsigned long long u, double d);
int rec_compile_annots(const char *text, int n, unsigned long long u, double d)
{
	const char c = 'c';
	short s = 2;
	long l = -3;
	float f = 0.25f;
	long double ld = 1.5L;
#ifdef __cplusplus
	bool b = true;
#else
	_Bool b = 1;
#endif
	int64_t i64 = INT64_MIN;
	uint8_t u8 = 255;

	TRACE_SCOPE();
	TRACE_VALUE("n", n);
	TRACE_VALUE("u", u);
	TRACE_VALUE("d", d);
	TRACE_VALUE("c", c);
	TRACE_VALUE("s", s);
	TRACE_VALUE("l", l);
	TRACE_VALUE("f", f);
	TRACE_VALUE("ld", ld);
	TRACE_VALUE("b", b);
	TRACE_VALUE("i64", i64);
	TRACE_VALUE("u8", u8);
	TRACE_VALUE("expr", n * 2 + 1);
	TRACE_VALUE("same line", 1); TRACE_VALUE("same line", 2.0);
	TRACE_INSTANT("instant");
	TRACE_MESSAGE(text);
	TRACE_MESSAGE("literal");
	TRACE_ARG("n", n);
	TRACE_ARG("u", u);
	TRACE_ARG("s", s);
	TRACE_FLOW_BEGIN("flow", u);
	TRACE_FLOW_STEP("flow", n);
	TRACE_FLOW_END("flow", 7);
	if (n)
		TRACE_INSTANT("if without braces");
	else
		TRACE_VALUE("else without braces", n);
	return n;
}
