/* SPDX-License-Identifier: MIT */
/*
 * prog_stdio_closed.c - a host started with descriptor 2 closed (a service
 * its supervisor starts so, `prog 2>&-`): records 100
 * scopes, reports a line on descriptor 2 as any program does, records 100
 * more and exits. Without librec the report fails (EBADF); so it must with
 * librec: exit 0 if it did, 3 if the line was written somewhere (into
 * librec's trace, which took the lowest free descriptor). Run by
 * test_outputs.c (finding F17).
 */
#include <errno.h>
#include <rec.h>
#include <unistd.h>

#define REPORT "prog_stdio_closed: a line the host reports on stderr\n"

static void __attribute__((noinline)) work(void)
{
	TRACE_SCOPE_NAMED("work");
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	ssize_t k;

	for (int i = 0; i < 100; i++)
		work();
	k = write(2, REPORT, sizeof(REPORT) - 1);
	for (int i = 0; i < 100; i++)
		work();
	return k < 0 && errno == EBADF ? 0 : 3;
}
