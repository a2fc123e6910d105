/* SPDX-License-Identifier: MIT */
/*
 * exit.c - the program calls _exit() or _Exit() (rec(3), EXIT, FORK AND
 * CRASH, "Exit" and "Crash"; README, "What librec guarantees"). No exit
 * handler runs, so without librec's copies the recording ended as after a
 * kill: up to REC_FLUSH_MS of events lost and no end marker (finding F23:
 * every Python multiprocessing fork worker leaves by os._exit()). librec's
 * copies, before the C library's:
 *   - inside the program's handler that librec called for a crash: the
 *     crash is captured (crash.c, rec__crash_before_exit());
 *   - from ordinary code, in the process whose recording runs (not a
 *     vfork() child, not while the thread is inside librec:
 *     rec__exec_wanted()), and not maybe in a signal handler
 *     (rec__crash_maybe_in_handler()): the recording ends as at exit(),
 *     the wait for the writer bounded (lifecycle.c, rec__exit_end());
 *     where another thread is ending it (exit(), rec_stop(), another
 *     _exit()), that end is waited for alike (rec__exit_wait_stop()), as
 *     the process would otherwise end in its middle (finding F31); and
 *     where another thread is starting it (its file created, the pool
 *     being faulted in), that start is waited for and the recording ended
 *     (finding F34: the file was left empty);
 *   - otherwise nothing: as before, a kill.
 * Then the C library's _exit(), looked up at load (interpose.c).
 *
 * librectrace.so exports the copies under glibc's version, as exec.c's.
 * librectrace.a gets them from this file built again with REC_STATIC_EXEC,
 * as exec.c's, with the plain names kept global (static_exec.keep), which
 * the program's own calls bind to at its link. Weak there: in a program
 * linked fully static, libc.a's _exit() (strong: glibc's exit() needs it)
 * takes the name instead, with no clash, and librec does not record there
 * (its writer thread cannot be made).
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#if defined(REC_GLIBC_HOOK_VERSION)

#include <sys/syscall.h>
#include <unistd.h>

#define EXIT_STR2(x) #x
#define EXIT_STR(x) EXIT_STR2(x)

/* glibc's _exit(), looked up at load: never in a signal handler or a child after fork(). */
static struct rec__next libc_exit = { "_exit", EXIT_STR(REC_GLIBC_HOOK_VERSION), NULL };

__attribute__((constructor)) static void exit_load(void)
{
	rec__next_fn(&libc_exit);
}

static __attribute__((noreturn)) void end_now(int status)
{
	void (*f)(int) = (void (*)(int))__atomic_load_n(&libc_exit.fn, __ATOMIC_ACQUIRE);

	if (!rec__crash_before_exit() && !rec__crash_maybe_in_handler()) {
		if (rec__exec_wanted() || rec__exit_starting())
			rec__exit_end(); /* a start under way: its end, not an empty file (F34) */
		else
			rec__exit_wait_stop(); /* another thread is ending it: not mid-way (F31) */
	}
	if (f)
		f(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

/* The program's calls: librectrace.so's under glibc's version, librectrace.a's plain and weak. */
void rec___exit_glibc(int status) REC_API __attribute__((noreturn));
void rec___Exit_glibc(int status) REC_API __attribute__((noreturn));
#if defined(REC_STATIC_EXEC)
__asm__(".weak _exit\n\t.type _exit, %function\n\t.set _exit, rec___exit_glibc");
__asm__(".weak _Exit\n\t.type _Exit, %function\n\t.set _Exit, rec___Exit_glibc");
#else
__asm__(".symver rec___exit_glibc, _exit@" EXIT_STR(REC_GLIBC_HOOK_VERSION));
__asm__(".symver rec___Exit_glibc, _Exit@" EXIT_STR(REC_GLIBC_HOOK_VERSION));
#endif

void rec___exit_glibc(int status)
{
	end_now(status);
}

void rec___Exit_glibc(int status)
{
	end_now(status);
}

#endif
