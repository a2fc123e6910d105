/* SPDX-License-Identifier: MIT */
/*
 * prog_dlloop.c - built with -finstrument-functions: loads the instrumented
 * module (dlmod.c) with dlopen(), calls dl_work() twice and unloads it with
 * dlclose(), CYCLES times, never waiting for librec's writer. The module is
 * gone before the writer looks at it: its functions must still be named.
 * Usage: prog_dlloop MODULE CYCLES
 */
#include <dlfcn.h>
#include <stdint.h>

int main(int argc, char **argv)
{
	int cycles = 0;

	/* Not atoi(): clang instruments glibc's inline copy of it. */
	for (const char *p = argc > 2 ? argv[2] : "1"; *p >= '0' && *p <= '9'; p++)
		cycles = cycles * 10 + (*p - '0');

	for (int i = 0; i < cycles; i++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		int (*work)(int);

		if (!h)
			return 2;
		work = (int (*)(int))(uintptr_t)dlsym(h, "dl_work");
		if (!work || work(1) != 4 || work(2) != 5)
			return 3;
		if (dlclose(h) != 0 || dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD))
			return 4; /* not unloaded: the test would test nothing */
	}
	return 0;
}
