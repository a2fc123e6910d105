/* SPDX-License-Identifier: MIT */
/*
 * prog_crash.c - crashes after recording, for test_crash.c: records
 * NR "side" scopes on a second thread (parked when the crash comes),
 * flushes them, then records NR scopes named "work", which the writer keeps
 * in memory (REC_FLUSH_MS=60000), then dies by the signal named, the way a real
 * program does (a null store, a bus error on a truncated mapping, an
 * undefined instruction, an integer division by zero, abort()).
 * Usage: prog_crash SIGNAL MODE [NR]
 *   SIGNAL  segv | bus | ill | fpe | abrt
 *   MODE    plain   - no handler of the program's
 *           own     - a SIGSEGV/... handler installed before recording starts;
 *                     it prints "own handler <signo>", records one more "work"
 *                     scope and re-raises by default
 *           info    - the same with SA_SIGINFO, SA_RESETHAND, returning (the
 *                     fault comes back and the default action kills)
 *           after   - the handler of own, installed after recording started,
 *                     and the crash at once: no wait for librec's writer
 *           after_info - the same with info's handler (SA_SIGINFO, SA_RESETHAND)
 *           after_abort - the same with a handler that records one "work"
 *                     scope and calls abort()
 *           raw     - own's handler installed after recording started past
 *                     sigaction() (libc's own, as a raw system call or a
 *                     static link would); waits until librec's writer has
 *                     taken the signal back (chaining to it), then crashes
 *           oldact  - no crash: after recording started, sigaction(),
 *                     signal() and sigset() on SIGNAL must return the
 *                     action the program set before, never librec's, and
 *                     leave librec's handler in force; prints "oldact ok"
 *                     and exits 0, or says which check failed (exit 10)
 *           window  - the crash comes inside a probe's window: the slot after
 *                     head half written, head not published
 *           flight  - (the prog_crash_flight build, linked with librec's
 *                     internals) flight mode's crash hook: the handler calls
 *                     rec__crash_write_snapshot() into $CRASH_SNAPSHOT, every
 *                     ring's whole content, instead of the stream capture
 *           stack   - (prog_crash_flight) as flight, each "work" scope with a
 *                     TRACE_VALUE, and the hook measures how much of librec's
 *                     crash stack the snapshot used (issue 26 item 2): it
 *                     prints "crash stack used U of S", or "not on the crash
 *                     stack"
 *           async   - the side thread goes on probing in a loop, and the main
 *                     thread sends it SIGABRT (pthread_kill): the handler
 *                     runs on a thread interrupted anywhere, a probe's window
 *                     included
 *           inscope - the crash comes inside a scope "crashing", open at the
 *                     crash (its enter recorded, no exit)
 *           fork    - a child records and crashes (REC_OUTPUT has %p); the
 *                     parent waits for it, records NR scopes, prints
 *                     "PARENT_PID CHILD_PID" and exits: 0 if the child died by SIGNAL
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <rec.h>
#ifdef PROG_CRASH_FLIGHT
#include <fcntl.h>

#include "rec_internal.h"
#endif
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int signo;
static bool annotate; /* mode stack */

static void __attribute__((noinline)) work(void)
{
	TRACE_SCOPE_NAMED("work");
	if (annotate)
		TRACE_VALUE("n", 1);
	__asm__ volatile("" ::: "memory");
}

static void __attribute__((noinline)) side(void)
{
	TRACE_SCOPE_NAMED("side");
	__asm__ volatile("" ::: "memory");
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int side_done;
static int side_spins; /* async mode: the side thread probes until the signal */
static pthread_t side_th;

static void *side_thread(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++)
		side();
	pthread_mutex_lock(&lock);
	side_done = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	while (side_spins)
		side();
	for (;;)
		pause(); /* alive, parked, when the crash comes */
	return NULL;
}

/* "own handler NN" on stdout, from a handler (async-signal-safe). */
static void say_own_handler(int sig)
{
	char msg[] = "own handler 00\n";

	msg[12] = (char)('0' + sig / 10);
	msg[13] = (char)('0' + sig % 10);
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(3);
}

/* The program's handler: says so, then dies by default. */
static void own_handler(int sig)
{
	say_own_handler(sig);
	/* A probe in the program's handler: it runs before librec's capture
	 * (a fault is a crash only if it kills), so this scope is recorded. */
	work();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void own_info_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	say_own_handler(sig);
	/* SA_RESETHAND: the default action is in force; a fault comes back on return. */
	if (si->si_code <= 0)
		raise(sig);
}

/* The program's handler that ends in abort() (a crash reporter's habit). */
static void own_abort_handler(int sig)
{
	say_own_handler(sig);
	work();
	abort();
}

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* libc's sigaction(), past librectrace.so's copy: what a raw system call does. */
static sigaction_fn libc_sigaction(void)
{
	sigaction_fn f = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");

	if (!f)
		exit(4);
	return f;
}

static void install_with(sigaction_fn f, void (*h)(int), bool info)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	if (info) {
		sa.sa_sigaction = own_info_handler;
		sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	} else {
		sa.sa_handler = h;
	}
	if (f(signo, &sa, NULL) != 0)
		exit(4);
}

static void install_own(bool info)
{
	install_with(sigaction, own_handler, info);
}

static void say_failed(const char *what)
{
	printf("oldact: %s\n", what);
	exit(10);
}

/* Whether a's mask holds exactly the signals of want (ended by 0), among 1..31. */
static bool mask_is(const struct sigaction *a, const int *want)
{
	for (int s = 1; s < 32; s++) {
		bool in = false;

		for (const int *w = want; *w; w++)
			in |= *w == s;
		if ((sigismember(&a->sa_mask, s) == 1) != in)
			return false;
	}
	return true;
}

/* Mode oldact: what the program's calls return while librec holds the signal. */
static void check_oldact(void)
{
	static const int usr1_term[] = { SIGUSR1, SIGTERM, 0 }, usr2[] = { SIGUSR2, 0 };
	struct sigaction a1, a2, o, k;

	memset(&a1, 0, sizeof(a1));
	a1.sa_sigaction = own_info_handler;
	a1.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESETHAND;
	sigemptyset(&a1.sa_mask);
	sigaddset(&a1.sa_mask, SIGUSR1);
	sigaddset(&a1.sa_mask, SIGTERM);
	memset(&a2, 0, sizeof(a2));
	a2.sa_handler = own_handler;
	a2.sa_flags = SA_RESTART;
	sigemptyset(&a2.sa_mask);
	sigaddset(&a2.sa_mask, SIGUSR2);
	if (sigaction(signo, &a1, &o) != 0)
		say_failed("sigaction a1 failed");
	if (o.sa_handler != SIG_DFL || (o.sa_flags & SA_SIGINFO))
		say_failed("the first old action is not SIG_DFL");
	if (sigaction(signo, &a2, &o) != 0)
		say_failed("sigaction a2 failed");
	if (!(o.sa_flags & SA_SIGINFO) || o.sa_sigaction != own_info_handler ||
	    (o.sa_flags & (SA_SIGINFO | SA_NODEFER | SA_RESETHAND | SA_RESTART)) !=
		    (SA_SIGINFO | SA_NODEFER | SA_RESETHAND) ||
	    !mask_is(&o, usr1_term))
		say_failed("the second old action is not a1");
	if (sigaction(signo, NULL, &o) != 0 || (o.sa_flags & SA_SIGINFO) ||
	    o.sa_handler != own_handler || !(o.sa_flags & SA_RESTART) || !mask_is(&o, usr2))
		say_failed("the action in force is not a2");
	if (signal(signo, SIG_IGN) != own_handler)
		say_failed("signal() did not return a2's handler");
	if (sigaction(signo, NULL, &o) != 0 || o.sa_handler != SIG_IGN)
		say_failed("the action in force is not SIG_IGN");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* sigset(): hosts still call it */
	if (sigset(signo, own_handler) != SIG_IGN)
		say_failed("sigset() did not return SIG_IGN");
#pragma GCC diagnostic pop
	if (sigaction(signo, &a1, &o) != 0 || o.sa_handler != own_handler)
		say_failed("sigaction() after sigset() did not return its handler");
	/* The kernel's action: librec's handler, neither of the program's. */
	if (libc_sigaction()(signo, NULL, &k) != 0 || !(k.sa_flags & SA_SIGINFO) ||
	    k.sa_sigaction == own_info_handler || k.sa_handler == own_handler)
		say_failed("librec's handler is not in force");
	printf("oldact ok\n");
	exit(0);
}

#ifdef PROG_CRASH_FLIGHT
static char snapshot_path[4096];

/*
 * Everything a ring holds: run in REC_MODE=flight (test_crash.c), where a
 * ring grows as it fills (copying every slot) and keeps its events.
 */
static uint64_t whole_ring(struct rec__thread *t, uint64_t head, void *arg)
{
	uint64_t cap = t->ring.p.mask + 1;

	(void)arg;
	return head > cap ? head - cap : 0;
}

/* Flight mode's hook, in the crash handler: open(2) and the snapshot writer only. */
static void snapshot(int sig, const siginfo_t *si)
{
	struct rec__crash_snapshot snap = { .first = whole_ring };
	int err;

	snap.fd = open(snapshot_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (snap.fd < 0)
		return;
	err = rec__crash_write_snapshot(&snap, sig, si);
	close(snap.fd);
	if (err && write(STDERR_FILENO, "snapshot failed\n", 16) < 0)
		_exit(3);
}

#define STACK_FILL 0xA5u

/*
 * The same, measuring the crash stack: everything below this frame (less
 * a margin for the calls that fill and scan) is filled, the snapshot
 * written, and the lowest byte changed found. Async-signal-safe output.
 */
static void __attribute__((noinline)) snapshot_measured(int sig, const siginfo_t *si)
{
	uint8_t *lo, *hi, *sp = __builtin_frame_address(0), *p;
	char line[80];
	int n;

	rec__crash_stack_bounds(&lo, &hi);
	if (!lo || sp <= lo + 1024 || sp > hi) {
		if (write(STDOUT_FILENO, "not on the crash stack\n", 23) < 0)
			_exit(3);
		snapshot(sig, si);
		return;
	}
	for (p = lo; p < sp - 512; p++)
		*(volatile uint8_t *)p = STACK_FILL;
	snapshot(sig, si);
	for (p = lo; p < hi && *p == STACK_FILL; p++)
		;
	n = snprintf(line, sizeof(line), "crash stack used %zu of %zu\n", (size_t)(hi - p),
		     (size_t)(hi - lo));
	if (write(STDOUT_FILENO, line, (size_t)n) < 0)
		_exit(3);
}
#endif

/* The faults are the point: UBSan must not turn them into reports first. */
__attribute__((no_sanitize("undefined"))) static void crash(void)
{
	switch (signo) {
	case SIGSEGV: {
		/* Hidden from the compiler: a store through a null pointer. */
		volatile int *volatile nowhere = NULL;

		*nowhere = 1;
		break;
	}
	case SIGBUS: {
		/* A mapping past the end of its file. */
		FILE *f = tmpfile();
		volatile char *p;

		if (!f)
			exit(5);
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(f), 0);
		if (p == MAP_FAILED)
			exit(5);
		(void)p[0];
		break;
	}
	case SIGILL:
#if defined(__aarch64__)
		__asm__ volatile("udf #0"); /* __builtin_trap() is BRK there: SIGTRAP */
#else
		__builtin_trap();
#endif
		break;
	case SIGFPE: {
		volatile int zero = 0, x = 1;

		x = x / zero;
#if !defined(__x86_64__) && !defined(__i386__)
		/* ARM64 (and most CPUs) give 0 for a division by zero: no trap. */
		raise(SIGFPE);
#endif
		break;
	}
	case SIGABRT:
		abort();
	}
	exit(6); /* not reached */
}

static int parse_signal(const char *s)
{
	static const struct {
		const char *name;
		int signo;
	} t[] = { { "segv", SIGSEGV }, { "bus", SIGBUS }, { "ill", SIGILL }, { "fpe", SIGFPE },
		  { "abrt", SIGABRT } };

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(s, t[i].name))
			return t[i].signo;
	exit(2);
}

static void record(long n)
{
	pthread_create(&side_th, NULL, side_thread, (void *)n);
	pthread_mutex_lock(&lock);
	while (!side_done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	/*
	 * The side thread's scopes are in the file now; the writer keeps the
	 * work scopes that follow for REC_FLUSH_MS (or until it has 1 MiB):
	 * only a crash capture can write them.
	 */
	if (rec_flush() != 0)
		exit(9);
	for (long i = 0; i < n; i++)
		work();
}

int main(int argc, char **argv)
{
	const char *mode;
	long n;

	if (argc < 3)
		return 2;
	signo = parse_signal(argv[1]);
	mode = argv[2];
	n = argc > 3 ? atol(argv[3]) : 1000;
	if (!strcmp(mode, "own") || !strcmp(mode, "info"))
		install_own(!strcmp(mode, "info"));
#ifdef PROG_CRASH_FLIGHT
	if (!strcmp(mode, "flight") || !strcmp(mode, "stack")) {
		snprintf(snapshot_path, sizeof(snapshot_path), "%s", getenv("CRASH_SNAPSHOT"));
		annotate = !strcmp(mode, "stack");
		rec__crash_set_flight(annotate ? snapshot_measured : snapshot);
	}
#endif
	if (!strcmp(mode, "fork")) {
		int status;
		pid_t pid = fork();

		if (pid == 0) {
			record(n);
			crash();
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			return 7;
		for (long i = 0; i < n; i++)
			work();
		printf("%d %d\n", (int)getpid(), (int)pid);
		return WIFSIGNALED(status) && WTERMSIG(status) == signo ? 0 : 8;
	}
	side_spins = !strcmp(mode, "async");
	record(n);
	if (side_spins) {
		pthread_kill(side_th, SIGABRT);
		for (;;)
			pause();
	}
	/* The program's handler after recording started: the crash at once. */
	if (!strcmp(mode, "after"))
		install_own(false);
	if (!strcmp(mode, "after_info"))
		install_own(true);
	if (!strcmp(mode, "after_abort"))
		install_with(sigaction, own_abort_handler, false);
	if (!strcmp(mode, "oldact"))
		check_oldact();
	if (!strcmp(mode, "raw")) {
		sigaction_fn f = libc_sigaction();
		struct sigaction cur;
		struct timespec nap = { 0, 10000000 };

		install_with(f, own_handler, false);
		/* librec's writer takes the signal back within a second or so. */
		for (int i = 0; i < 6000; i++) {
			if (f(signo, NULL, &cur) == 0 && cur.sa_handler != own_handler)
				break;
			nanosleep(&nap, NULL);
		}
	}
	if (!strcmp(mode, "window")) {
		/* What a probe interrupted mid-push leaves: rec.h's window, open. */
		struct rec__producer *p = rec__prod;
		uint64_t h = rec__window_open(p);

		p->events[h & p->mask].ticks = ~0ull;
		p->events[h & p->mask].code = 0xdeadu; /* half a record: no head store */
	}
	if (!strcmp(mode, "inscope")) {
		TRACE_SCOPE_NAMED("crashing");
		crash();
	}
	crash();
	return 0;
}
