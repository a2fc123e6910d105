// SPDX-License-Identifier: MIT
//
// prog_instr.cpp - a C++ program built with -finstrument-functions and
// linked with librec, for tests/instrument/test_instrument.c. Every kind of
// function the whole-program mode must name, with known call counts:
//   main 1, helper(int) 3 (static), Foo::bar(int) 5 (a method),
//   shlib_work 7 (a shared library), plain_work 4 (a shared library not
//   linked with librec), dl_work 11 (a dlopen'ed module, path in argv[1]),
//   and a manual TRACE_SCOPE_NAMED("manual_block") 2 times.
// With INSTR_SLEEP_MS set, main also calls sleeper(), which sleeps that
// long (for REC_MIN_NS). Exit 0 if every result is as expected.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rec.h>

extern "C" int shlib_work(int n);
extern "C" int plain_work(int n); // in a library not linked with librec

#ifndef VARIANT
#define VARIANT 1 // -DVARIANT=2 builds a different binary (stale-binary test)
#endif

static __attribute__((noinline)) int helper(int n)
{
	return n * VARIANT + 1;
}

struct Foo {
	int base;
	__attribute__((noinline)) int bar(int n);
};

int Foo::bar(int n)
{
	return base + n;
}

static __attribute__((noinline)) void sleeper(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	long acc = 0, want = 0;
	Foo foo = { 10 };

	if (argc < 2) {
		fprintf(stderr, "usage: %s DLMOD.so\n", argv[0]);
		return 2;
	}
	rec_thread_name("main");
	for (int i = 0; i < 3; i++) {
		acc += helper(i);
		want += i * VARIANT + 1;
	}
	for (int i = 0; i < 5; i++) {
		acc += foo.bar(i);
		want += 10 + i;
	}
	for (int i = 0; i < 7; i++) {
		acc += shlib_work(i);
		want += i * 2 + 1;
	}
	for (int i = 0; i < 4; i++) {
		acc += plain_work(i);
		want += i - 1;
	}
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	int (*dl_work)(int) = (int (*)(int))dlsym(h, "dl_work");
	if (!dl_work)
		return 1;
	for (int i = 0; i < 11; i++) {
		acc += dl_work(i);
		want += i + 3;
	}
	for (int i = 0; i < 2; i++) {
		TRACE_SCOPE_NAMED("manual_block");
		acc += i;
		want += i;
	}
	const char *ms = getenv("INSTR_SLEEP_MS");
	if (ms)
		sleeper(strtol(ms, NULL, 10));
	return acc == want ? 0 : 1;
}
