/* SPDX-License-Identifier: MIT */
/*
 * prog_recover.c - a program whose own handler takes its faults (finding F7),
 * for test_crash.c: a fault it handles is no crash, and recording goes on.
 * Usage: prog_recover MODE
 *   jump      - a SIGSEGV handler that siglongjmp()s out (a "safe read" probe,
 *               as JVMs, emulators and memory scanners do), installed before
 *               recording starts; NR_FAULTS probes of an unmapped address,
 *               each a scope "probe" followed by NR_LEAVES scopes "leaf";
 *               prints "recovered N"
 *   jumpalt   - the same, the handler on an alternate signal stack
 *               (SA_ONSTACK | SA_SIGINFO)
 *   jumpafter - the same, the handler installed after recording started
 *               (sigaction(): librec chains to it from then on)
 *   jumpexit  - as jump, rec_flush() after the first probe (so that the file
 *               holds a frame whenever the writer runs), then _exit(0) from a
 *               frame that spans, untouched, the place where the handler
 *               ran: no crash (the jump ended it)
 *   guard     - a write barrier (Boehm GC's incremental mode, guard pages):
 *               the SA_SIGINFO handler makes the page writable and returns;
 *               NR_ROUNDS rounds of NR_LEAVES "leaf" scopes, each ending with
 *               a store to the page made read-only; prints "handled N"
 *   exit      - NR_LEAVES "side" scopes, rec_flush(), NR_LEAVES "work"
 *               scopes, then a fault, which the handler ends with _exit(7)
 *   exitc     - the same, the handler calling exit(7)
 *   chainback - the handler, installed after recording started past
 *               sigaction() (libc's own, as a raw system call would: so it
 *               gets librec's handler as the action it replaced, which
 *               sigaction() never returns), saves that action and calls it
 *               back, as handlers that chain to the previous one do; waits
 *               until librec's writer has taken the signal back (chaining
 *               to it); NR_LEAVES "work" scopes, then a fault: the process
 *               dies by SIGSEGV
 * Exit: 0 (jump*, guard) when every fault was handled; 7 (exit, exitc); by SIGSEGV
 * (chainback); 2 on bad usage, 3 on a setup failure.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <rec.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NR_FAULTS 100
#define NR_LEAVES 1000
#define NR_ROUNDS 10

static sigjmp_buf jb;
static volatile int recovered, handled;
static char *page;
static struct sigaction previous; /* chainback: the action the handler replaced */

/* The scopes counted: a site each (a name must be a literal). */
#define SCOPE_FN(fn)                                                                       \
	static void __attribute__((noinline)) fn(void)                                     \
	{                                                                                  \
		TRACE_SCOPE_NAMED(#fn);                                                    \
		__asm__ volatile("" ::: "memory");                                         \
	}
SCOPE_FN(leaf)
SCOPE_FN(side)
SCOPE_FN(work)

static void on_jump(int sig)
{
	(void)sig;
	recovered++;
	siglongjmp(jb, 1);
}

static void on_jump_info(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	on_jump(sig);
}

/* The fault is the point: UBSan must not report it first. */
__attribute__((no_sanitize("undefined"))) static int __attribute__((noinline))
probe_mem(volatile int *p)
{
	TRACE_SCOPE_NAMED("probe");
	if (sigsetjmp(jb, 1))
		return -1;
	return *p;
}

static void on_guard(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if ((char *)si->si_addr != page)
		_exit(4);
	handled++;
	mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

static void say(const char *s)
{
	if (write(STDOUT_FILENO, s, strlen(s)) < 0)
		_exit(3);
}

static void on_exit_handler(int sig)
{
	(void)sig;
	say("own handler exits\n");
	_exit(7);
}

static void on_exitc_handler(int sig)
{
	(void)sig;
	say("own handler exits\n");
	exit(7);
}

static void on_chainback(int sig, siginfo_t *si, void *uc)
{
	say("own handler chains back\n");
	if (previous.sa_flags & SA_SIGINFO)
		previous.sa_sigaction(sig, si, uc);
	else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN)
		previous.sa_handler(sig);
}

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* How install() installs: sigaction(), or libc's own past librectrace.so's (chainback). */
static sigaction_fn install_fn = sigaction;

static void install(void (*h)(int), void (*hi)(int, siginfo_t *, void *), int flags,
		    struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	if (hi)
		sa.sa_sigaction = hi;
	else
		sa.sa_handler = h;
	sa.sa_flags = flags | (hi ? SA_SIGINFO : 0);
	if (install_fn(SIGSEGV, &sa, old) != 0)
		exit(3);
}

/* librec's writer takes SIGSEGV back within a second or so (rec(3), "Crash"). */
static void wait_taken_back(void *mine)
{
	struct timespec nap = { 0, 10000000 };

	for (int i = 0; i < 6000; i++) {
		struct sigaction cur;

		if (install_fn(SIGSEGV, NULL, &cur) == 0 && (void *)cur.sa_handler != mine)
			return;
		nanosleep(&nap, NULL);
	}
	exit(3);
}

__attribute__((no_sanitize("undefined"))) static void fault(void)
{
	volatile int *volatile nowhere = NULL;

	*nowhere = 1;
}

/* Hidden from the compiler: an address no mapping holds. */
static volatile int *volatile unmapped = (volatile int *)8;

static int jump(void)
{
	for (int i = 0; i < NR_FAULTS; i++) {
		probe_mem(unmapped);
		for (int k = 0; k < NR_LEAVES; k++)
			leaf();
	}
	printf("recovered %d\n", recovered);
	return recovered == NR_FAULTS ? 0 : 1;
}

/* _exit() from a frame over the stack the handler's frames were on, left as they were. */
static void __attribute__((noinline)) exit_deep(int status)
{
	volatile char over[16384];

	over[0] = 0;
	fflush(stdout);
	_exit(status + over[0]);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "jump")) {
		install(on_jump, NULL, 0, NULL);
		leaf(); /* the first probe: recording starts */
		return jump();
	}
	if (!strcmp(mode, "jumpexit")) {
		install(on_jump, NULL, 0, NULL);
		leaf();
		rec_flush();
		exit_deep(jump());
	}
	if (!strcmp(mode, "jumpalt")) {
		static char alt[64 << 10];
		stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };

		if (sigaltstack(&ss, NULL) != 0)
			return 3;
		install(NULL, on_jump_info, SA_ONSTACK, NULL);
		leaf();
		return jump();
	}
	if (!strcmp(mode, "jumpafter")) {
		leaf();
		install(on_jump, NULL, 0, NULL);
		return jump();
	}
	if (!strcmp(mode, "guard")) {
		page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (page == MAP_FAILED)
			return 3;
		install(NULL, on_guard, 0, NULL);
		for (int i = 0; i < NR_ROUNDS; i++) {
			for (int k = 0; k < NR_LEAVES; k++)
				leaf();
			mprotect(page, 4096, PROT_READ);
			((volatile char *)page)[0] = (char)i; /* a handled fault */
		}
		printf("handled %d\n", handled);
		return handled == NR_ROUNDS ? 0 : 1;
	}
	if (!strcmp(mode, "exit") || !strcmp(mode, "exitc")) {
		install(strcmp(mode, "exit") ? on_exitc_handler : on_exit_handler, NULL, 0, NULL);
		for (int k = 0; k < NR_LEAVES; k++)
			side();
		if (rec_flush() != 0)
			return 3;
		for (int k = 0; k < NR_LEAVES; k++)
			work();
		fault();
		return 1;
	}
	if (!strcmp(mode, "chainback")) {
		side();
		install_fn = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
		if (!install_fn)
			return 3;
		install(NULL, on_chainback, 0, &previous);
		wait_taken_back((void *)on_chainback);
		for (int k = 0; k < NR_LEAVES; k++)
			work();
		fault();
		return 1;
	}
	return 2;
}
