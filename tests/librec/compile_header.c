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
