/* SPDX-License-Identifier: MIT */
/*
 * sample.c - REC_SAMPLE=HZ: the call stack of every thread, HZ times per
 * second of the thread's CPU time (rec(3); FORMAT.md §3.22-§3.24;
 * docs/DESIGN.md "Sampling" says why this mechanism and measures it).
 *
 * Each thread has its own clock: a perf_event task-clock event of the
 * thread (user mode) whose overflow sends a real-time signal to that very
 * thread (F_SETOWN_EX), or, where perf_event_open is refused
 * (perf_event_paranoid), a POSIX timer on the thread's CPU-time clock
 * (SIGEV_THREAD_ID), which the kernel checks only at its tick. Never
 * SIGPROF or setitimer: those are the host's.
 *
 * The handler unwinds the interrupted stack with the GCC unwinder of
 * Debian's libgcc_s (_Unwind_Backtrace: DWARF CFI, .eh_frame, found through
 * glibc's _dl_find_object, which takes no lock and allocates nothing), from
 * the signal frame on, and writes the sample into the thread's ring with the
 * probes' protocol (ring.h): slots of code REC__ANNOT_CODE, the first
 * holding the time and REC__SAMPLE_KIND, then one address a slot. A sample
 * that interrupted a probe's window or librec's own code waits in the
 * thread's state (up to REC__SAMPLE_PEND_WORDS words; beyond, dropped,
 * counted) and is written by the thread's next probe, which the handler
 * sends out of line (rec__prod NULL), or by its next sample. No lock, no
 * malloc in the handler but on a thread's first sample, which attaches the
 * thread as a first probe in a signal handler does (thread.c: mmap).
 *
 * Threads are armed when they start (pthread_create, below: before their
 * start routine runs), the threads present when sampling starts by their
 * thread ids (/proc/self/task); each is disarmed by itself at exit
 * (thread.c) or, if it never took a sample, by the writer when its thread id
 * is gone from /proc/self/task (rec__sample_reap(), every 100 ms).
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#define NOINSTR __attribute__((no_instrument_function))

/* One armed thread: its clock's handle. Under reg_lock (normal context only). */
struct armed {
	pid_t tid;	 /* 0: free */
	int fd;		 /* perf event, -1 if a timer */
	timer_t timer;	 /* POSIX timer when fd < 0 */
	uint64_t perf_id; /* PERF_EVENT_IOC_ID: that fd is still ours */
	uint32_t gen;	  /* S.gen when armed */
};

static struct {
	uint32_t hz;
	uint64_t period_ns;
	int signo;
	uint32_t mech;	/* RECFMT_SAMPLE_MECH_*, of the threads armed first */
	uint32_t clock; /* RECFMT_SAMPLE_CLOCK_* */
	bool perf_ok;	/* perf_event_open works here */
	uint32_t perf_max, perf_live; /* perf fds at most, and now (under reg_lock) */
	_Unwind_Reason_Code (*backtrace)(_Unwind_Trace_Fn, void *);
	uintptr_t (*get_ip_info)(struct _Unwind_Context *, int *);
	uintptr_t unwinder_lo, unwinder_hi; /* libgcc_s's code: never unwound through (F37) */
	uintptr_t switch_lo[2], switch_hi[2]; /* swapcontext(), setcontext(): likewise */
	pthread_mutex_t reg_lock;
	struct armed *reg;
	uint32_t nr_reg, cap_reg;
	int ready; /* the handler is installed and threads may be armed */
	pid_t never_tid; /* librec's writer */
	bool (*start)(void); /* lifecycle.c's rec__start_lazy(), handed in (no call cycle) */
	void (*note)(const char *why); /* lifecycle.c's note for `tracetool record`, likewise */
	uint64_t scan_ns; /* CLOCK_MONOTONIC of the writer's last /proc scan */
	uint32_t gen;	  /* scans begun (under reg_lock) */
	uint8_t signalled; /* one of our clocks' signals reached a handler */
	uint8_t given_up;  /* the program took signo (rec__sigaction()): disarmed for good */
	bool jump_sp_ok; /* jump_sp() reads a jmp_buf's stack pointer here (longjmp() below) */
	const uintptr_t *ptr_guard; /* ARM64: ld.so's __pointer_chk_guard */
} S = { .reg_lock = PTHREAD_MUTEX_INITIALIZER };

/* Threads that are never sampled (librec's writer), and one being disarmed. */
__thread uint8_t rec__sample_never __attribute__((tls_model("initial-exec")));
/* Set while librec creates its own thread: pthread_create() below arms nothing. */
static __thread uint8_t creating_internal __attribute__((tls_model("initial-exec")));

uint32_t rec__sample_hz(void)
{
	return __atomic_load_n(&S.ready, __ATOMIC_ACQUIRE) ? S.hz : 0;
}

void rec__sample_describe(struct recfmt_sampling *out)
{
	*out = (struct recfmt_sampling){
		.hz = S.hz,
		.clock = S.clock,
		.mechanism = S.mech,
		.max_frames = REC__SAMPLE_MAX_FRAMES,
		.period_ns = S.period_ns,
	};
}

/* ---------------------------------------------------------------------
 * The handler.
 */
struct walk {
	uint64_t *f;
	uint32_t n, max, skipped;
	uintptr_t pc; /* the interrupted instruction */
	uint32_t flags;
	bool found;
};

/*
 * Code no walk goes through (see unwind()): libgcc_s's, and the C
 * library's context switches, which load the new stack pointer before
 * their last instructions, where their CFI no longer holds.
 */
static NOINSTR bool no_walk(uintptr_t ip)
{
	return (ip >= S.unwinder_lo && ip < S.unwinder_hi) ||
	       (ip >= S.switch_lo[0] && ip < S.switch_hi[0]) ||
	       (ip >= S.switch_lo[1] && ip < S.switch_hi[1]);
}

static NOINSTR _Unwind_Reason_Code walk_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	int before = 0;
	uintptr_t ip = S.get_ip_info(ctx, &before);

	if (ip == 0)
		return _URC_END_OF_STACK; /* past the outermost frame (_start, clone's) */
	if (!w->found) {
		/* The handler's own frames, then the signal frame: its ip is the pc. */
		if (ip != w->pc || !before)
			return ++w->skipped > 32 ? _URC_END_OF_STACK : _URC_NO_REASON;
		w->found = true;
		w->f[w->n++] = ip;
		return _URC_NO_REASON;
	}
	if (w->n == w->max) {
		w->flags |= RECFMT_SAMPLE_TRUNCATED;
		return _URC_END_OF_STACK;
	}
	/* FORMAT.md §3.23: a caller's frame is its return address; a frame
	 * interrupted by another signal is exact, so +1 keeps "address - 1" in it. */
	w->f[w->n++] = before ? ip + 1 : ip;
	/* The unwinder's own frame (an exception being thrown, up the stack):
	 * its caller is not computed (see unwind()). */
	if (no_walk(ip)) {
		w->flags |= RECFMT_SAMPLE_TRUNCATED;
		return _URC_END_OF_STACK;
	}
	return _URC_NO_REASON;
}

static NOINSTR uintptr_t context_pc(const ucontext_t *uc)
{
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.pc;
#else
	(void)uc;
	return 0;
#endif
}

/* The executable segment of the module that holds S.backtrace (libgcc_s). */
static int on_unwinder_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t at = (uintptr_t)S.backtrace;

	(void)size, (void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && at >= lo &&
		    at - lo < ph->p_memsz) {
			S.unwinder_lo = lo;
			S.unwinder_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* Where the unwinder's own code is, once, before any sample (see unwind()). */
static void unwinder_code(void)
{
	static const char *const switchers[2] = { "swapcontext", "setcontext" };

	dl_iterate_phdr(on_unwinder_module, NULL);
	for (int i = 0; i < 2; i++) {
		void *fn = dlsym(RTLD_DEFAULT, switchers[i]);
		const ElfW(Sym) *sym = NULL;
		Dl_info info;

		if (fn && dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size) {
			S.switch_lo[i] = (uintptr_t)fn;
			S.switch_hi[i] = (uintptr_t)fn + sym->st_size;
		}
	}
}

/*
 * The walk under way on this thread, for rec__sample_walk_fault(): a fault
 * inside it (a stack switch that the unwind tables do not describe, in code
 * librec does not know: greenlet's, boost.context's) comes back to its
 * start instead of killing the program (finding F37). The sample handler
 * leaves SIGSEGV and SIGBUS unblocked for this; librec's crash handler
 * calls rec__sample_walk_fault() first (crash.c).
 */
static __thread sigjmp_buf *walk_env __attribute__((tls_model("initial-exec")));

/*
 * The stack at the signal: frames innermost first. Return: how many.
 *
 * Not through the unwinder itself (libgcc_s): a C++ exception being thrown
 * runs _Unwind_RaiseException(), whose landing (__builtin_eh_return) moves
 * the stack pointer before its last jump, where its CFI no longer holds; a
 * walk from a signal there took a word of the stack for the caller's pc and
 * faulted reading it (finding F37: every program that threw exceptions died
 * of SIGSEGV under REC_SAMPLE). Nor into its FDE lookup from a signal that
 * interrupted it. Likewise swapcontext() and setcontext() (coroutines): a
 * signal after they loaded the new context's stack pointer found a word of
 * that stack where their CFI puts the return address (F37 too). A pc inside
 * them is the sample's one frame; a frame of them up the stack ends the walk
 * there (walk_frame()); both marked truncated.
 */
static NOINSTR uint32_t unwind(const ucontext_t *uc, uint64_t *f, uint32_t *flags)
{
	struct walk w = { .f = f, .max = REC__SAMPLE_MAX_FRAMES, .pc = context_pc(uc) };
	sigjmp_buf env;

	if (no_walk(w.pc)) {
		f[0] = w.pc;
		*flags = RECFMT_SAMPLE_TRUNCATED;
		return 1;
	}
	if (sigsetjmp(env, 0)) {
		/* The walk faulted: rec__sample_walk_fault() came back here. */
		f[0] = context_pc(uc);
		*flags = RECFMT_SAMPLE_TRUNCATED;
		return 1;
	}
	__atomic_store_n(&walk_env, &env, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	S.backtrace(walk_frame, &w);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&walk_env, NULL, __ATOMIC_RELAXED);
	if (!w.found) {
		/* The unwinder did not reach the signal frame: the pc alone. */
		f[0] = w.pc;
		*flags = RECFMT_SAMPLE_TRUNCATED;
		return 1;
	}
	*flags = w.flags;
	return w.n;
}

/*
 * Room for `need` in t's ring now: probe.c's room_or_sleep() without the
 * sleep (ring.h's refresh, a larger ring while REC_MEMORY allows, flight
 * mode's discard, a wake of the writer when the ring fills); a sample never
 * waits. Here, not in probe.c, so that sample.c calls nothing that calls
 * back into it (lifecycle.c).
 */
static NOINSTR bool room_nowait(struct rec__thread *t, uint64_t need)
{
	enum rec__ring_room room;
	uint64_t tail;

	if (__atomic_load_n(&rec__flight_overwrite, __ATOMIC_RELAXED)) {
		/* A counted thread's ring is discarded by whole groups, as probe.c does. */
		uint64_t group = t->reg.ctr ? 1 + (uint64_t)t->reg.ctr->nr : 1, chunk;
		bool discarded = false, frozen = rec__flight_frozen_now();

		/* Full: a larger ring first; then discard the oldest chunk. */
		if (rec__ring_refresh_flight(&t->ring, need, group, false, &discarded) ==
			    REC__RING_FULL &&
		    rec__thread_grow(t, rec__ring_flight_from(&t->ring), true) &&
		    rec__ring_refresh_flight(&t->ring, need, group, false, &discarded) ==
			    REC__RING_ROOM)
			return true;
		chunk = (t->ring.p.mask + 1) / 8 / group * group;
		room = rec__ring_refresh_flight(&t->ring, need, chunk ? chunk : group, !frozen,
						&discarded);
		if (discarded && rec__flight_wake_on_discard)
			rec__writer_wake();
		return room == REC__RING_ROOM;
	}
	room = rec__ring_refresh(&t->ring, need, &tail);
	/* A quarter full or more: a larger ring, while REC_MEMORY allows. */
	if (room != REC__RING_ROOM && rec__thread_grow(t, tail, room == REC__RING_FULL))
		room = rec__ring_refresh(&t->ring, need, &tail);
	if (room != REC__RING_ROOM && tail != t->ring.p.woke_tail) {
		t->ring.p.woke_tail = tail; /* one wake per drain, as probe.c */
		rec__writer_wake();
	}
	return room != REC__RING_FULL;
}

/*
 * Writes one sample into t's ring with the probes' protocol (ring.h);
 * called in the handler, outside any window of this thread. Never waits:
 * a ring without room drops it (counted). A thread with REC_COUNTERS holds
 * groups of 1 + nr slots: the sample takes whole groups (its last one
 * padded with slots of REC__ANNOT_CODE), leaves room for every pending
 * exit's group, and keeps the ring's limit at 0 as probe.c's counted path
 * does (rec_internal.h). Return: true if written.
 */
static NOINSTR bool push(struct rec__thread *t, uint64_t ticks, uint32_t flags, uint32_t n,
			 const uint64_t *f)
{
	struct rec__counters *c = t->reg.ctr;
	uint32_t aux = REC__SAMPLE_KIND << 28 | flags << 16 | n;
	uint64_t group = c ? 1 + (uint64_t)c->nr : 1, slots = (1 + n + group - 1) / group * group;
	uint64_t head, need;
	struct recfmt_event *ev;

	head = rec__window_open(&t->ring.p);
	need = head + (c ? c->pending * group : t->ring.p.reserved) + slots;
	if (need > (c ? c->limit : t->ring.p.limit)) {
		bool ok = room_nowait(t, need);

		if (c) {
			c->limit = t->ring.p.limit;
			t->ring.p.limit = 0; /* the fast path stays away (probe.c) */
		}
		if (!ok) {
			rec__window_close(&t->ring.p);
			return false;
		}
	}
	ev = &rec__own_slots(t)[head & t->ring.p.mask];
	ev->ticks = ticks;
	ev->code = REC__ANNOT_CODE;
	ev->aux = aux;
	for (uint64_t i = 0; i + 1 < slots; i++) {
		ev = &rec__own_slots(t)[(head + 1 + i) & t->ring.p.mask];
		ev->ticks = i < n ? f[i] : 0;
		ev->code = REC__ANNOT_CODE;
		ev->aux = 0;
	}
	__atomic_store_n(&t->ring.p.annots, 1, __ATOMIC_RELAXED); /* before (B), as probe.c */
	/* (B) pairs with (C) in writer.c: every slot before head moves. */
	__atomic_store_n(&t->ring.p.head, head + slots, __ATOMIC_RELEASE);
	rec__window_close(&t->ring.p);
	return true;
}

/*
 * Writes the samples waiting in t->own.pend, oldest first (each counted
 * dropped if the ring has no room), and empties it. Outside any window of
 * this thread: in the handler, or in rec__sample_flush() with rec__in_librec
 * set, where a handler may append one meanwhile: it is written too, and the
 * store that empties the words is a compare-exchange that fails if one was
 * (one instruction, which a handler sees whole).
 */
static NOINSTR void write_waiting(struct rec__thread *t)
{
	uint32_t i = 0, end, n;
	const uint64_t *w;

	for (;;) {
		end = __atomic_load_n(&t->own.pend_words, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the words below end are read after */
		if (i == end) {
			if (__atomic_compare_exchange_n(&t->own.pend_words, &end, 0, false,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
				return;
			continue;
		}
		w = &t->own.pend[i];
		n = (uint32_t)w[1];
		if (!push(t, w[0], (uint32_t)(w[1] >> 32), n, w + 2))
			rec__count_one(&t->own.nr_samples_dropped);
		i += 2 + n;
	}
}

/* The inline probe back on the fast path (the handler's detour, take_sample()). */
static NOINSTR void end_detour(struct rec__thread *t)
{
	if (!t->own.detour)
		return;
	t->own.detour = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rec__prod = &t->ring.p;
}

/*
 * rec__sample_flush() - the thread, outside a probe's window, in a probe's
 * out-of-line path (probe.c: rec__enter(), rec__exit(), rec__annot(), the
 * counted path after its window closed) or at its exit: the samples that
 * landed in windows since, written now rather than at the thread's next
 * sample, so that a thread that spends much of its time inside windows
 * (probes in every call; a counted thread's read(2) of each counter) keeps
 * its samples. The handler's detour (rec__prod NULL) brings the next inline
 * probe here; it ends first, so that a handler meanwhile detours again.
 * rec__in_librec keeps a sample that comes meanwhile from writing the same
 * ones again: it waits, and is written by this loop.
 */
NOINSTR void rec__sample_flush(struct rec__thread *t)
{
	if (rec__in_librec || t->ring.p.nesting)
		return; /* a host's handler that interrupted one: the next probe */
	rec__in_librec = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	end_detour(t);
	/* Not recording: they wait for the thread's next sample, which writes them. */
	if (!__atomic_load_n(&t->ring.p.off, __ATOMIC_RELAXED) && t->ring.p.events)
		write_waiting(t);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rec__in_librec = 0;
}

/* Was this signal sent by one of our clocks (not by kill(2) or sigqueue(3))? */
static NOINSTR bool ours(const siginfo_t *si)
{
	if (si->si_code == SI_TIMER)
		return si->si_value.sival_int == (int)REC__SAMPLE_COOKIE;
	return si->si_code == POLL_IN || si->si_code == POLL_HUP; /* F_SETSIG of a perf event */
}

/*
 * Whether this handler runs on the thread's alternate signal stack, which it
 * does only where the host's own handler was running there (the sampling
 * signal is installed without SA_ONSTACK, so the kernel stays on the stack it
 * interrupted). The kernel saved the thread's alternate stack in the context
 * (uc_stack; its ss_flags do not say whether it is in use): the handler's own
 * frame inside it says so, without a system call.
 */
static NOINSTR bool on_alt_stack(const void *ucv, uintptr_t here)
{
	const stack_t *ss = ucv ? &((const ucontext_t *)ucv)->uc_stack : NULL;

	return ss && !(ss->ss_flags & SS_DISABLE) && ss->ss_size &&
	       here - (uintptr_t)ss->ss_sp < ss->ss_size;
}

static NOINSTR __attribute__((noinline)) void take_sample(int signo, siginfo_t *si, void *ucv)
{
	int saved_errno = errno;
	struct rec__thread *t;
	uint64_t f[REC__SAMPLE_MAX_FRAMES], ticks;
	uint32_t n, flags;

	(void)signo;
	if (!ours(si) || rec__sample_never || __atomic_load_n(&S.given_up, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&rec__g.state, __ATOMIC_ACQUIRE) > REC__RUNNING)
		goto out;
	t = rec__self;
	if (!t) {
		/* This thread's first sample: attach it as a first probe would. */
		if (rec__in_librec)
			goto out;
		rec__in_librec = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (S.start())
			t = rec__thread_attach();
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		rec__in_librec = 0;
		if (!t)
			goto out;
	}
	if (__atomic_load_n(&t->ring.p.off, __ATOMIC_RELAXED))
		goto out;
	if (!t->ring.p.events) {
		rec__count_one(&t->own.nr_samples_dropped); /* no ring (the budget) */
		goto out;
	}
	if (si->si_code == SI_TIMER && si->si_overrun > 0)
		t->own.nr_samples_dropped += (uint64_t)si->si_overrun; /* ticks the kernel merged */
	ticks = rec__now_ticks(t);
	n = unwind(ucv, f, &flags);
	if (t->ring.p.nesting || rec__in_librec) {
		/*
		 * Inside a probe's window or librec: the ring is the interrupted
		 * code's. The sample waits (dropped, counted, if the words are
		 * full), and the thread's next inline probe goes out of line
		 * (rec__prod NULL: rec.h), where rec__sample_flush() writes it:
		 * the fast path is not changed.
		 */
		uint32_t w = t->own.pend_words;

		if (w + 2 + n > REC__SAMPLE_PEND_WORDS) {
			rec__count_one(&t->own.nr_samples_dropped);
		} else {
			t->own.pend[w] = ticks;
			t->own.pend[w + 1] = (uint64_t)flags << 32 | n;
			memcpy(&t->own.pend[w + 2], f, (size_t)n * sizeof(f[0]));
			__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the words, then their count */
			__atomic_store_n(&t->own.pend_words, w + 2 + n, __ATOMIC_RELAXED);
		}
		if (!t->own.detour && rec__prod == &t->ring.p) {
			t->own.detour = 1;
			rec__prod = NULL;
		}
		goto out;
	}
	write_waiting(t);
	end_detour(t);
	if (!push(t, ticks, flags, n, f))
		rec__count_one(&t->own.nr_samples_dropped);
out:
	errno = saved_errno;
}

/*
 * The handler: a small frame first, the unwind's 1 KiB of addresses in
 * take_sample(). A handler of the host's on its alternate stack runs with
 * this signal blocked (shield(), below); should one run there all the same
 * (installed by a raw system call, past sigaction()), the sample is dropped
 * and counted.
 */
static NOINSTR void on_signal(int signo, siginfo_t *si, void *ucv)
{
	struct rec__thread *t;
	char here;

	if (__atomic_load_n(&S.given_up, __ATOMIC_RELAXED))
		return; /* the program took the signal: one queued before it did */
	if (si->si_code == POLL_HUP || si->si_code == POLL_IN) {
		/*
		 * A perf event is armed for one overflow (PERF_EVENT_IOC_REFRESH),
		 * each of which queues a real-time signal: where the thread blocks
		 * the signal, one waits, not one per period until the user's
		 * RLIMIT_SIGPENDING is full (sigqueue() failing in every process
		 * of the user). Rearmed first, so the period still counts the
		 * handler's time as before.
		 */
		int saved_errno = errno;

		ioctl(si->si_fd, PERF_EVENT_IOC_REFRESH, 1);
		errno = saved_errno;
	}
	if (!__atomic_load_n(&S.signalled, __ATOMIC_RELAXED) && ours(si))
		__atomic_store_n(&S.signalled, 1, __ATOMIC_RELAXED);
	if (!on_alt_stack(ucv, (uintptr_t)&here)) {
		take_sample(signo, si, ucv);
		return;
	}
	t = rec__self;
	if (t && ours(si))
		rec__count_one(&t->own.nr_samples_dropped);
}

/* ---------------------------------------------------------------------
 * Arming threads. Normal context only (the registry's lock).
 */
static int perf_open(pid_t tid, uint64_t period_ns)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = period_ns;
	a.disabled = 1;
	/*
	 * User mode only: no sample can be pending when the thread enters the
	 * kernel (execve: a signal queued inside it would reach the new program,
	 * whose default action for it is to terminate), and it is what
	 * perf_event_paranoid 2 allows an unprivileged process.
	 */
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* A perf event for tid, its signal to that thread. Return: fd, or -errno. */
static int arm_perf(pid_t tid, uint64_t *id)
{
	struct f_owner_ex owner = { F_OWNER_TID, tid };
	int fd = perf_open(tid, S.period_ns);

	if (fd < 0)
		return -errno;
	/* Away from the descriptors the host counts on (0, 1, 2, the lowest free). */
	fd = rec__fd_high(fd);
	if (fcntl(fd, F_SETOWN_EX, &owner) < 0 || fcntl(fd, F_SETSIG, S.signo) < 0 ||
	    fcntl(fd, F_SETFL, O_ASYNC) < 0 || ioctl(fd, PERF_EVENT_IOC_ID, id) < 0 ||
	    ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) < 0) { /* one overflow: on_signal() rearms */
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* A POSIX timer on tid's CPU clock, its signal to that thread. Return: 0 or -errno. */
static int arm_timer(pid_t tid, timer_t *timer)
{
	struct sigevent sev;
	struct itimerspec its;
	/* The CPU clock of another thread of this process (what pthread_getcpuclockid() makes). */
	clockid_t clock = (clockid_t)((~(unsigned)tid << 3) | 6u); /* CPUCLOCK_PERTHREAD | SCHED */

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = S.signo;
	sev.sigev_value.sival_int = (int)REC__SAMPLE_COOKIE;
	sev._sigev_un._tid = tid;
	if (timer_create(clock, &sev, timer) < 0)
		return -errno;
	its.it_interval.tv_sec = (time_t)(S.period_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(S.period_ns % 1000000000u);
	its.it_value = its.it_interval;
	if (timer_settime(*timer, 0, &its, NULL) < 0) {
		int err = -errno;

		timer_delete(*timer);
		return err;
	}
	return 0;
}

static void disarm(struct armed *a)
{
	if (a->fd >= 0) {
		uint64_t id = 0;

		/* Closed only if it is still our event (a host may have closed it). */
		if (ioctl(a->fd, PERF_EVENT_IOC_ID, &id) == 0 && id == a->perf_id)
			close(a->fd);
		S.perf_live--;
	} else {
		timer_delete(a->timer);
	}
	a->tid = 0;
}

/* Arms tid (once). Return: 0, or -errno (the thread is not sampled). */
static int arm(pid_t tid)
{
	struct armed a = { .tid = tid, .fd = -1 };
	int err = 0;

	if (tid == __atomic_load_n(&S.never_tid, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&S.reg_lock);
	if (S.given_up)
		goto done;
	a.gen = S.gen;
	for (uint32_t i = 0; i < S.nr_reg; i++)
		if (S.reg[i].tid == tid)
			goto done; /* already */
	if (S.perf_ok && S.perf_live < S.perf_max) {
		a.fd = arm_perf(tid, &a.perf_id);
		if (a.fd >= 0)
			S.perf_live++;
	}
	if (a.fd < 0)
		err = arm_timer(tid, &a.timer);
	if (err)
		goto done;
	for (uint32_t i = 0; i < S.nr_reg; i++) {
		if (S.reg[i].tid == 0) {
			S.reg[i] = a;
			goto done;
		}
	}
	if (S.nr_reg == S.cap_reg) {
		uint32_t cap = S.cap_reg ? 2 * S.cap_reg : 64;
		struct armed *r = realloc(S.reg, cap * sizeof(*r));

		if (!r) {
			disarm(&a);
			err = -ENOMEM;
			goto done;
		}
		S.reg = r;
		S.cap_reg = cap;
	}
	S.reg[S.nr_reg++] = a;
done:
	pthread_mutex_unlock(&S.reg_lock);
	return err;
}

static void disarm_tid(pid_t tid)
{
	pthread_mutex_lock(&S.reg_lock);
	for (uint32_t i = 0; i < S.nr_reg; i++)
		if (S.reg[i].tid == tid)
			disarm(&S.reg[i]);
	pthread_mutex_unlock(&S.reg_lock);
}

/*
 * rec__sample_thread_exit() - the exiting thread (thread.c's destructor):
 * no sample of it from now on. A signal already queued finds
 * rec__sample_never set.
 */
void rec__sample_thread_exit(void)
{
	if (!__atomic_load_n(&S.ready, __ATOMIC_ACQUIRE))
		return;
	rec__sample_never = 1;
	disarm_tid((pid_t)gettid());
	if (rec__self) {
		/* Its last samples, and rec__prod as rec__set_self() left it. */
		rec__sample_flush(rec__self);
		rec__self->own.detour = 0;
	}
}

/*
 * rec__sample_never_me() - librec's writer, as it starts: never sampled
 * (its CPU time is librec's, measured apart: docs/DESIGN.md "Sampling").
 */
void rec__sample_never_me(void)
{
	rec__sample_never = 1;
	__atomic_store_n(&S.never_tid, (pid_t)gettid(), __ATOMIC_RELAXED);
	if (__atomic_load_n(&S.ready, __ATOMIC_ACQUIRE))
		disarm_tid((pid_t)gettid()); /* a scan may have armed it first */
}

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* The thread ids of the process now, sorted, in *out (malloc). Return: how many, or -1. */
static long list_threads(pid_t **out)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t *v = NULL;
	size_t n = 0, cap = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		long tid = strtol(e->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		if (n == cap) {
			pid_t *w = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!w) {
				free(v);
				closedir(d);
				return -1;
			}
			v = w;
		}
		v[n++] = (pid_t)tid;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_tid);
	*out = v;
	return (long)n;
}

/*
 * The writer, each pass; every 100 ms, one listing of /proc/self/task
 * against the registry: arms the threads not created through
 * pthread_create() (clone(), a static link), and disarms the threads gone
 * without a sample (no destructor of ours ran on them) -- those armed
 * before the listing began and absent from it (one armed meanwhile may be
 * missing from it, and is left for the next). Sorted lists on both sides,
 * so a process with many threads costs the writer N log N a scan, not a
 * system call per thread per pass.
 */
void rec__sample_reap(void)
{
	struct timespec now;
	pid_t *live = NULL, *known = NULL;
	long nr_live;
	size_t nr_known = 0;
	uint32_t gen;
	uint64_t ns;

	if (!__atomic_load_n(&S.ready, __ATOMIC_ACQUIRE))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	if (ns - S.scan_ns < 100000000u)
		return;
	S.scan_ns = ns;
	pthread_mutex_lock(&S.reg_lock);
	gen = ++S.gen;
	pthread_mutex_unlock(&S.reg_lock);
	nr_live = list_threads(&live);
	if (nr_live < 0)
		return;
	pthread_mutex_lock(&S.reg_lock);
	known = malloc((S.nr_reg ? S.nr_reg : 1) * sizeof(*known));
	for (uint32_t i = 0; i < S.nr_reg; i++) {
		struct armed *a = &S.reg[i];

		if (!a->tid)
			continue;
		if (a->gen != gen &&
		    !bsearch(&a->tid, live, (size_t)nr_live, sizeof(*live), cmp_tid))
			disarm(a);
		else if (known)
			known[nr_known++] = a->tid;
	}
	pthread_mutex_unlock(&S.reg_lock);
	if (known) {
		qsort(known, nr_known, sizeof(*known), cmp_tid);
		for (long i = 0; i < nr_live; i++)
			if (!bsearch(&live[i], known, nr_known, sizeof(*known), cmp_tid))
				arm(live[i]);
	}
	free(known);
	free(live);
}

/* A hexadecimal signal set of /proc/PID/task/TID/status ("SigBlk:\t..."). */
static uint64_t status_set(const char *status, const char *key)
{
	const char *p = strstr(status, key);

	return p ? strtoull(p + strlen(key), NULL, 16) : 0;
}

/*
 * rec__sample_exit_check() - at exit (lifecycle.c), before the writer's
 * end: whether sampling took no sample because every thread of the program
 * blocks the sampling signal, a clock of one of them having fired (the
 * signal waits for it): then says so in one line. A program that ran less
 * than a period, or whose threads that blocked it are gone, is not told.
 * *signo: the signal. Return: true if it said so.
 */
bool rec__sample_exit_check(int *signo)
{
	char path[64], status[4096];
	pid_t *live;
	long n;
	uint32_t threads = 0, blocked = 0, waiting = 0;
	uint64_t bit;

	if (!__atomic_load_n(&S.ready, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&S.signalled, __ATOMIC_RELAXED))
		return false;
	bit = 1ull << (S.signo - 1);
	n = list_threads(&live);
	for (long i = 0; i < n; i++) {
		int fd;
		ssize_t len;

		if (live[i] == __atomic_load_n(&S.never_tid, __ATOMIC_RELAXED))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)live[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, status, sizeof(status) - 1);
		close(fd);
		if (len <= 0)
			continue;
		status[len] = '\0';
		threads++;
		blocked += (status_set(status, "SigBlk:") & bit) != 0;
		waiting += ((status_set(status, "SigPnd:") | status_set(status, "ShdPnd:")) & bit) != 0;
	}
	if (n >= 0)
		free(live);
	if (!threads || blocked != threads || !waiting)
		return false;
	*signo = S.signo;
	rec__log("REC_SAMPLE: no sample taken: every thread of the program blocks signal %d "
		 "(SIGRTMAX-%d), which librec samples with", S.signo, SIGRTMAX - S.signo);
	return true;
}

/*
 * rec__sample_exit_closed() - at exit (lifecycle.c), after
 * rec__sample_exit_check(): whether no sample was taken because the
 * program closed the perf-event descriptors librec samples with (a daemon's
 * close_range(3, ~0U, 0) or closefrom() at its start, before any sample
 * came): every thread was armed with one and none is librec's any more.
 * Then says so in one line (F28, check4: nothing was said). Return: true if
 * it said so.
 */
bool rec__sample_exit_closed(void)
{
	uint32_t perf = 0, ours = 0, timers = 0;

	if (!__atomic_load_n(&S.ready, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&S.signalled, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&S.given_up, __ATOMIC_RELAXED))
		return false;
	pthread_mutex_lock(&S.reg_lock);
	for (uint32_t i = 0; i < S.nr_reg; i++) {
		const struct armed *a = &S.reg[i];
		uint64_t id = 0;

		if (!a->tid)
			continue;
		if (a->fd < 0) {
			timers++; /* a POSIX timer: no descriptor to close */
			continue;
		}
		perf++;
		ours += ioctl(a->fd, PERF_EVENT_IOC_ID, &id) == 0 && id == a->perf_id;
	}
	pthread_mutex_unlock(&S.reg_lock);
	if (!perf || ours || timers)
		return false;
	rec__log("REC_SAMPLE: no sample taken: the program closed the descriptors librec samples "
		 "with (close_range(), closefrom()) before the first sample");
	return true;
}

/* Every thread of the process now (at start). */
static void arm_all_present(void)
{
	pid_t *live;
	long n = list_threads(&live);

	for (long i = 0; i < n; i++)
		arm(live[i]);
	if (n >= 0)
		free(live);
}

/* ---------------------------------------------------------------------
 * Threads created by the program: armed before their start routine.
 */
struct start {
	void *(*fn)(void *);
	void *arg;
};

static void *thread_start(void *p)
{
	struct start s = *(struct start *)p;

	free(p);
	if (!rec__sample_never && __atomic_load_n(&S.ready, __ATOMIC_ACQUIRE)) {
		arm((pid_t)gettid());
		/* Its state now, outside any handler, if recording runs. */
		if (__atomic_load_n(&rec__g.state, __ATOMIC_ACQUIRE) == REC__RUNNING) {
			rec__in_librec = 1;
			rec__thread_attach();
			rec__in_librec = 0;
		}
	}
	return s.fn(s.arg);
}

#define REC__STR2(x) #x
#define REC__STR(x) REC__STR2(x)
#ifdef REC_GLIBC_HOOK_VERSION
#define REC__GLIBC REC__STR(REC_GLIBC_HOOK_VERSION)
#else
#define REC__GLIBC NULL
#endif

/* The functions librec stands before (next_fn()): glibc's name and version of each. */
enum next {
	NEXT_PTHREAD_CREATE,
	NEXT_SIGACTION,
	NEXT_SIGNAL,
	NEXT_BSD_SIGNAL,
	NEXT_SYSV_SIGNAL,
	NEXT_SIGSET,
	NEXT_SIGIGNORE,
	NEXT_LONGJMP,
	NEXT_LONGJMP_CHK,
	NEXT_NR
};

static struct rec__next next_sym[NEXT_NR] = {
	[NEXT_PTHREAD_CREATE] = { "pthread_create", "GLIBC_2.34", NULL },
	[NEXT_SIGACTION] = { "sigaction", REC__GLIBC, NULL },
	[NEXT_SIGNAL] = { "signal", REC__GLIBC, NULL },
	[NEXT_BSD_SIGNAL] = { "bsd_signal", REC__GLIBC, NULL },
	[NEXT_SYSV_SIGNAL] = { "sysv_signal", REC__GLIBC, NULL },
	[NEXT_SIGSET] = { "sigset", REC__GLIBC, NULL },
	[NEXT_SIGIGNORE] = { "sigignore", REC__GLIBC, NULL },
	[NEXT_LONGJMP] = { "siglongjmp", REC__GLIBC, NULL },
#ifdef REC_GLIBC_LONGJMP_CHK_VERSION
	[NEXT_LONGJMP_CHK] = { "__longjmp_chk", REC__STR(REC_GLIBC_LONGJMP_CHK_VERSION), NULL },
#else
	[NEXT_LONGJMP_CHK] = { "__longjmp_chk", NULL, NULL },
#endif
};

/*
 * The definition of a function that librec's own copy stands before
 * (interpose.c). rec__sample_init() looks every one up first, in normal
 * context, so that a wrapper a host calls in a signal handler (signal()
 * re-installing the handler, longjmp() out of it) never enters the dynamic
 * linker there. Return: the function, or NULL (errno ENOSYS).
 */
static void *next_fn(enum next which)
{
	return rec__next_fn(&next_sym[which]);
}

/* See walk_env, above. */
bool rec__sample_walk_fault(int signo, const siginfo_t *si)
{
	sigjmp_buf *env = __atomic_load_n(&walk_env, __ATOMIC_RELAXED);
	void (*jump)(sigjmp_buf, int);

	/* A fault of this thread's walk, not a SIGSEGV another process sent. */
	if (!env || (signo != SIGSEGV && signo != SIGBUS) || !si || si->si_code <= 0)
		return false;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	jump = siglongjmp; /* the sanitizer's own, which keeps its shadow stack right */
#else
	/* The C library's: librec's copy (wrap_jump()) would walk this stack again. */
	jump = (void (*)(sigjmp_buf, int))next_fn(NEXT_LONGJMP);
	if (!jump)
		return false;
#endif
	__atomic_store_n(&walk_env, NULL, __ATOMIC_RELAXED);
	jump(*env, 1);
	return false; /* not reached */
}

static int real_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	int (*f)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
		next_fn(NEXT_PTHREAD_CREATE);

	return f ? f(th, attr, fn, arg) : EAGAIN;
}

#if defined(REC_GLIBC_HOOK_VERSION) && !defined(REC_NO_THREAD_HOOK)
#define REC__THREAD_HOOK 1
#endif

/*
 * librec's own threads (the writer): never sampled, made with libc's
 * pthread_create() (real_create()) or, in a sanitized build, with the
 * sanitizer's interceptor, so that it knows the thread (AddressSanitizer
 * its stack: a forked child's writer met the parent's stale stack
 * poisoning; ThreadSanitizer its accesses). One way for both: the first
 * pthread_create() in the global scope that is not librec's own (the
 * sanitizer runtime's, linked first into the program), else the next one
 * after librec's (librectrace.so's copy first, preloaded: then the
 * runtime's comes after it). Under ThreadSanitizer librec exports no copy
 * (REC_NO_THREAD_HOOK), so the first is the runtime's.
 */
#if defined(REC_SANITIZED)
/*
 * The threads that a sanitizer's runtime starts with the first thread made
 * through it (ThreadSanitizer's background thread, which never ends) are
 * not the host's: with them counted, the writer never found a host whose
 * main() ended with pthread_exit() gone (writer.c, host_gone()), and the
 * process never ended. Those that appeared while librec made its first
 * thread of the process (the writer, at load: no host thread is made then),
 * the writer's own among them. Written before the writer runs.
 */
static pid_t runtime_tid[8];
static uint32_t nr_runtime_tid;
static bool runtime_seen;

bool rec__thread_is_runtime(pid_t tid)
{
	for (uint32_t i = 0; i < nr_runtime_tid; i++)
		if (runtime_tid[i] == tid)
			return true;
	return false;
}
#else
bool rec__thread_is_runtime(pid_t tid)
{
	(void)tid;
	return false;
}
#endif

int rec__pthread_create_internal(pthread_t *th, const pthread_attr_t *attr,
				 void *(*fn)(void *), void *arg)
{
	int err;

	creating_internal = 1;
#if defined(REC_SANITIZED)
	void *f = dlsym(RTLD_DEFAULT, "pthread_create");
	Dl_info it, self;
	pid_t *before = NULL, *after = NULL;
	long nr_before = runtime_seen ? -1 : list_threads(&before), nr_after = -1;

	if (f && dladdr(f, &it) && dladdr((void *)rec__pthread_create_internal, &self) &&
	    it.dli_fbase == self.dli_fbase)
		f = dlsym(RTLD_NEXT, "pthread_create");
	err = f ? ((int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))f)(
			  th, attr, fn, arg)
		: real_create(th, attr, fn, arg);
	if (nr_before >= 0 && !err) {
		runtime_seen = true;
		nr_after = list_threads(&after);
	}
	for (long i = 0; i < nr_after && nr_runtime_tid < 8; i++)
		if (!bsearch(&after[i], before, (size_t)nr_before, sizeof(*before), cmp_tid))
			runtime_tid[nr_runtime_tid++] = after[i];
	if (nr_before >= 0)
		free(before);
	if (nr_after >= 0)
		free(after);
#else
	err = real_create(th, attr, fn, arg);
#endif
	creating_internal = 0;
	return err;
}

__attribute__((unused)) static int create_armed(pthread_t *th, const pthread_attr_t *attr,
					     void *(*fn)(void *), void *arg)
{
	struct start *s;
	int err;

	if (creating_internal || !__atomic_load_n(&S.ready, __ATOMIC_ACQUIRE))
		return real_create(th, attr, fn, arg);
	s = malloc(sizeof(*s));
	if (!s)
		return real_create(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	err = real_create(th, attr, thread_start, s);
	if (err)
		free(s);
	return err;
}

#ifdef REC__THREAD_HOOK
/*
 * pthread_create() as the program calls it, in librectrace.so only: the
 * dynamic linker matches a versioned reference by the version's name and
 * searches librec before libc (linked or preloaded), as for hooks.c's
 * copies of glibc's hooks. GLIBC_2.34 is the version of programs linked
 * against glibc 2.34 or later, REC_GLIBC_HOOK_VERSION that of older ones
 * (libpthread's). Copies, not aliases (see hooks.c). The static library
 * has no pthread_create(): the writer's scan arms its threads (rec__sample_reap()).
 */
int rec__pthread_create_234(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			    void *arg) __attribute__((visibility("default")));
int rec__pthread_create_old(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			    void *arg) __attribute__((visibility("default")));
__asm__(".symver rec__pthread_create_234, pthread_create@@GLIBC_2.34");
__asm__(".symver rec__pthread_create_old, pthread_create@" REC__STR(REC_GLIBC_HOOK_VERSION));

int rec__pthread_create_234(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			    void *arg)
{
	return create_armed(th, attr, fn, arg);
}

int rec__pthread_create_old(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			    void *arg)
{
	return create_armed(th, attr, fn, arg);
}
#endif

/* ---------------------------------------------------------------------
 * The program's signal handlers (rec(3), REC_SAMPLE; README, "Sampling").
 *
 * A handler of the program's that runs on its alternate stack (SA_ONSTACK)
 * runs with the sampling signal blocked: a sample that comes meanwhile waits
 * until it returns, instead of the kernel pushing a second frame (3 KiB and
 * more with AVX-512) onto a stack sized for the program's handler alone.
 * The handlers present at start are patched (shield_present()), later ones
 * through sigaction() below. A program that takes the sampling signal for
 * itself ends sampling for good first, so it never gets a signal it did
 * not send.
 */

/* Adds the sampling signal to the mask of an SA_ONSTACK handler. Return: whether it did. */
static bool shield(int sig, struct sigaction *sa)
{
	if (sig == S.signo || !(sa->sa_flags & SA_ONSTACK) || sa->sa_handler == SIG_DFL ||
	    sa->sa_handler == SIG_IGN || sigismember(&sa->sa_mask, S.signo) == 1)
		return false;
	sigaddset(&sa->sa_mask, S.signo);
	return true;
}

/* At start: the handlers the program installed before librec was loaded or started. */
static void shield_present(void)
{
	for (int sig = 1; sig <= SIGRTMAX; sig++) {
		struct sigaction sa;

		if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &sa) == 0 &&
		    shield(sig, &sa))
			sigaction(sig, &sa, NULL);
	}
}

/*
 * crash.c's sigaction() and the signals it is for (bit s - 1 for signal s):
 * stored once at load by rec__sample_take_crash(), fn last (release), read
 * with acquire.
 */
static rec__sigaction_fn crash_sigaction;
static uint64_t crash_signals;

void rec__sample_take_crash(rec__sigaction_fn fn, const int *signals, unsigned nr)
{
	uint64_t set = 0;

	for (unsigned i = 0; i < nr; i++)
		if (signals[i] >= 1 && signals[i] <= 64)
			set |= 1ull << (signals[i] - 1);
	__atomic_store_n(&crash_signals, set, __ATOMIC_RELAXED);
	__atomic_store_n(&crash_sigaction, fn, __ATOMIC_RELEASE);
}

#ifdef REC__THREAD_HOOK
/* crash.c's sigaction() if sig is a crash signal, else NULL. */
static rec__sigaction_fn crash_fn(int sig)
{
	rec__sigaction_fn f = __atomic_load_n(&crash_sigaction, __ATOMIC_ACQUIRE);

	return f && sig >= 1 && sig <= 64 &&
			       (__atomic_load_n(&crash_signals, __ATOMIC_RELAXED) >> (sig - 1) & 1)
		       ? f
		       : NULL;
}

/*
 * libc's sigaction(); for a crash signal crash.c's, which keeps librec's
 * handler installed and the program's action apart, to chain to (README
 * "After a crash"): the program's sigaction() of a crash signal, however
 * made (sigaction(), signal(), sigset(), ...), ends there.
 */
static int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int (*f)(int, const struct sigaction *, struct sigaction *) = crash_fn(sig);

	if (!f)
		f = next_fn(NEXT_SIGACTION);
	return f ? f(sig, act, old) : -1;
}

/* Whether librec's copies act for sig: its sampling signal, or a crash signal. */
static bool takes(int sig)
{
	return (__atomic_load_n(&S.ready, __ATOMIC_ACQUIRE) && sig == S.signo) || crash_fn(sig);
}

/*
 * The program takes the sampling signal: every clock disarmed (none armed
 * from now on), then the signal ignored a moment, which discards any
 * instance of it still queued to a thread (sigaction(2)), before the
 * program's action is installed.
 */
static void give_up(void)
{
	struct sigaction ign;

	pthread_mutex_lock(&S.reg_lock);
	if (S.given_up) {
		pthread_mutex_unlock(&S.reg_lock);
		return;
	}
	__atomic_store_n(&S.given_up, 1, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < S.nr_reg; i++)
		if (S.reg[i].tid)
			disarm(&S.reg[i]);
	pthread_mutex_unlock(&S.reg_lock);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	real_sigaction(S.signo, &ign, NULL);
	rec__log("REC_SAMPLE: the program took signal %d (SIGRTMAX-%d), which librec sampled "
		 "with: sampling stopped, no samples from now on",
		 S.signo, SIGRTMAX - S.signo);
	/*
	 * And tells `tracetool record` now, not at exit: the program that does
	 * this at its start, the Go runtime (it takes every signal), ends by
	 * the exit_group system call, which runs no exit handler (F27, check4:
	 * record blamed a short run or a librec not loaded).
	 */
	if (S.note) {
		char why[64];

		snprintf(why, sizeof(why), "!sample-signal-taken %d%s", S.signo,
			 __atomic_load_n(&S.signalled, __ATOMIC_RELAXED) ? ""
									: " before-first-sample");
		S.note(why);
	}
}

static int wrap_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int signo = __atomic_load_n(&S.ready, __ATOMIC_ACQUIRE) ? S.signo : 0;
	struct sigaction sa;
	int err;

	if (!signo)
		return real_sigaction(sig, act, old);
	if (sig == signo) {
		bool was_ours = !__atomic_load_n(&S.given_up, __ATOMIC_RELAXED);

		if (was_ours && act)
			give_up();
		if (was_ours && !act) {
			err = 0; /* librec's handler: the program sees the default it left */
		} else {
			err = real_sigaction(sig, act, was_ours ? NULL : old);
		}
		if (!err && was_ours && old) {
			memset(old, 0, sizeof(*old));
			old->sa_handler = SIG_DFL;
			sigemptyset(&old->sa_mask);
		}
		return err;
	}
	if (act) {
		sa = *act;
		if (shield(sig, &sa))
			act = &sa;
	}
	err = real_sigaction(sig, act, old);
	if (!err && old && (old->sa_flags & SA_ONSTACK))
		sigdelset(&old->sa_mask, signo); /* the program's own mask, as it set it */
	return err;
}

/* What wrap_signal() calls: signal(), bsd_signal() and sysv_signal() alike. */
typedef sighandler_t (*signal_fn)(int, sighandler_t);

/* signal(), bsd_signal() and sysv_signal() as glibc makes them, for the signals librec takes. */
static sighandler_t wrap_signal(enum next which, int sig, sighandler_t h, int flags)
{
	struct sigaction sa, old;

	if (!takes(sig)) {
		signal_fn f = (signal_fn)next_fn(which);

		return f ? f(sig, h) : SIG_ERR;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sigemptyset(&sa.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&sa.sa_mask, sig);
	sa.sa_flags = flags;
	return wrap_sigaction(sig, &sa, &old) < 0 ? SIG_ERR : old.sa_handler;
}

/*
 * sigset() (System V) as glibc makes it, for the signals librec takes:
 * SIG_HOLD blocks it in the calling thread (librec's clocks keep running;
 * this thread's sample waits, rec(3)); any other disposition is the
 * program's action for it, installed as sigaction() above installs one
 * (sampling stops; a crash signal's is chained to), then the signal
 * unblocked. Return: SIG_HOLD if it was blocked, else the action the
 * program had (SIG_DFL while librec held the sampling signal).
 */
static sighandler_t wrap_sigset(int sig, sighandler_t h)
{
	struct sigaction sa, old;
	sigset_t one, was;

	if (!takes(sig)) {
		signal_fn f = (signal_fn)next_fn(NEXT_SIGSET);

		return f ? f(sig, h) : SIG_ERR;
	}
	sigemptyset(&one);
	sigaddset(&one, sig);
	if (h == SIG_HOLD) {
		if (pthread_sigmask(SIG_BLOCK, &one, &was) != 0 ||
		    wrap_sigaction(sig, NULL, &old) < 0)
			return SIG_ERR;
		return sigismember(&was, sig) == 1 ? SIG_HOLD : old.sa_handler;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sigemptyset(&sa.sa_mask);
	if (wrap_sigaction(sig, &sa, &old) < 0 || pthread_sigmask(SIG_UNBLOCK, &one, &was) != 0)
		return SIG_ERR;
	return sigismember(&was, sig) == 1 ? SIG_HOLD : old.sa_handler;
}

/* sigignore() (System V): SIG_IGN for a signal librec takes is the program's action. */
static int wrap_sigignore(int sig)
{
	struct sigaction sa;

	if (!takes(sig)) {
		int (*f)(int) = next_fn(NEXT_SIGIGNORE);

		return f ? f(sig) : -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	return wrap_sigaction(sig, &sa, NULL);
}

/* ---------------------------------------------------------------------
 * longjmp() out of a handler (rec(3), REC_SAMPLE).
 *
 * A handler of the program's that runs with librec's signal blocked
 * (shield()) and leaves by longjmp(), not by returning, skips the
 * kernel's restoring of the thread's mask: glibc's longjmp() restores a
 * mask only when sigsetjmp() saved one. The thread kept librec's signal
 * blocked for good and was never sampled again, without a word. So
 * librectrace.so wraps longjmp(), _longjmp(), siglongjmp() and
 * __longjmp_chk() (_FORTIFY_SOURCE's): a jump that leaves the alternate
 * signal stack, or a signal handler on the thread's own stack, with
 * librec's signal blocked and no mask of its own to restore unblocks
 * librec's signal, and only it.
 *
 * Not on the alternate stack, though: a sample waiting there would be
 * delivered at once, the kernel's frame on the very stack the shield keeps
 * it off. The unblocking (or glibc's restoring of a saved mask that does
 * not block librec's signal) runs on the stack the jump goes to instead,
 * below its stack pointer: the frames there are the ones the jump
 * abandons, and a sample taken just after the jump would use that room
 * anyway. Costs one sigprocmask() a jump while sampling runs, two system
 * calls and a stack walk more only with librec's signal blocked.
 */

/* The stack pointer a jmp_buf restores (glibc mangles it, PTR_MANGLE), or 0. */
static NOINSTR uintptr_t jump_sp(const struct __jmp_buf_tag *env)
{
#if defined(__x86_64__)
	uintptr_t v = (uintptr_t)env->__jmpbuf[6], guard; /* JB_RSP */

	__asm__("mov %%fs:0x30, %0" : "=r"(guard)); /* tcbhead_t's pointer_guard */
	return (v >> 0x11 | v << (64 - 0x11)) ^ guard;
#elif defined(__aarch64__)
	const uintptr_t *guard = S.ptr_guard;

	return guard ? (uintptr_t)env->__jmpbuf[13] ^ *guard : 0; /* JB_SP */
#else
	(void)env;
	return 0;
#endif
}

/* Whether jump_sp() reads this glibc's jmp_buf: setjmp() here, its stack pointer near. */
static NOINSTR __attribute__((noinline)) bool jump_sp_works(void)
{
	jmp_buf jb;
	char here;

	if (setjmp(jb))
		return false; /* never jumped to */
	return jump_sp(jb) <= (uintptr_t)&here && (uintptr_t)&here - jump_sp(jb) < 4096;
}

typedef void (*jump_fn)(struct __jmp_buf_tag *, int) __attribute__((noreturn));

/* The jump hop() makes: the thread's own, set just before it moves there. */
static __thread struct {
	jump_fn jump;
	struct __jmp_buf_tag *env;
	int val;
	bool unblock;
} hop_to __attribute__((tls_model("initial-exec")));

static NOINSTR void unblock_signo(void)
{
	sigset_t one;

	sigemptyset(&one);
	sigaddset(&one, S.signo);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
}

/* On the jump's stack: librec's signal unblocked (a waiting sample taken here), then the jump. */
static NOINSTR __attribute__((noreturn, used)) void hop(void)
{
	jump_fn jump = hop_to.jump;
	struct __jmp_buf_tag *env = hop_to.env;
	int val = hop_to.val;

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (hop_to.unblock)
		unblock_signo();
	jump(env, val);
}

/* hop() with sp (16-byte aligned) its stack, as an outermost frame (return address 0). */
static NOINSTR __attribute__((noreturn)) void hop_at(uintptr_t sp)
{
#if defined(__x86_64__)
	__asm__ volatile("mov %0, %%rsp\n\txor %%ebp, %%ebp\n\tpush $0\n\tjmp *%1"
			 :
			 : "r"(sp), "r"(hop)
			 : "memory");
#elif defined(__aarch64__)
	__asm__ volatile("mov sp, %0\n\tmov x29, xzr\n\tmov x30, xzr\n\tbr %1"
			 :
			 : "r"(sp), "r"(hop)
			 : "memory");
#else
	(void)sp;
	hop();
#endif
	__builtin_unreachable();
}

struct frames_seen {
	uint32_t n;
	bool signal;
};

static NOINSTR _Unwind_Reason_Code find_signal_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct frames_seen *fs = arg;
	int before = 0;

	if (S.get_ip_info(ctx, &before) == 0 || ++fs->n > 256)
		return _URC_END_OF_STACK;
	if (before)
		fs->signal = true; /* an interrupted frame: a handler runs above it */
	return before ? _URC_END_OF_STACK : _URC_NO_REASON;
}

/* Whether a signal handler runs: a signal frame in the stack (on the thread's own stack). */
static NOINSTR bool in_handler(void)
{
	struct frames_seen fs = { 0 };

	S.backtrace(find_signal_frame, &fs);
	return fs.signal;
}

static NOINSTR __attribute__((noreturn)) void wrap_jump(enum next which,
							struct __jmp_buf_tag *env, int val)
{
	jump_fn jump = (jump_fn)next_fn(which);
	int signo = __atomic_load_n(&S.ready, __ATOMIC_ACQUIRE) ? S.signo : 0;
	sigset_t cur;
	stack_t ss;
	uintptr_t to;
	bool alt;

	if (!jump)
		__builtin_trap(); /* glibc without siglongjmp(): no jump is possible */
	if (!signo || !S.jump_sp_ok || __atomic_load_n(&S.given_up, __ATOMIC_RELAXED) ||
	    (env->__mask_was_saved && sigismember(&env->__saved_mask, signo) == 1) ||
	    pthread_sigmask(SIG_BLOCK, NULL, &cur) != 0 || sigismember(&cur, signo) != 1)
		jump(env, val);
	/* librec's signal blocked, and the jump unblocks it or may. */
	to = jump_sp(env);
	alt = sigaltstack(NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE);
	if (alt && to - (uintptr_t)ss.ss_sp < ss.ss_size)
		jump(env, val); /* to the alternate stack: inside the handler still */
	if (alt && (ss.ss_flags & SS_ONSTACK)) {
		/* Leaving the alternate stack: the rest on the jump's own stack. */
		hop_to.jump = jump;
		hop_to.env = env;
		hop_to.val = val;
		hop_to.unblock = !env->__mask_was_saved;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		hop_at((to - 256) & ~(uintptr_t)15);
	}
	if (!env->__mask_was_saved && in_handler())
		unblock_signo();
	jump(env, val);
}

/* Exported under glibc's version, as pthread_create() above. */
int rec__sigaction_glibc(int sig, const struct sigaction *act, struct sigaction *old)
	__attribute__((visibility("default")));
int rec__sigaction2_glibc(int sig, const struct sigaction *act, struct sigaction *old)
	__attribute__((visibility("default")));
sighandler_t rec__signal_glibc(int sig, sighandler_t h) __attribute__((visibility("default")));
sighandler_t rec__ssignal_glibc(int sig, sighandler_t h) __attribute__((visibility("default")));
sighandler_t rec__bsd_signal_glibc(int sig, sighandler_t h) __attribute__((visibility("default")));
sighandler_t rec__sysv_signal_glibc(int sig, sighandler_t h)
	__attribute__((visibility("default")));
sighandler_t rec__sysv_signal2_glibc(int sig, sighandler_t h)
	__attribute__((visibility("default")));
sighandler_t rec__sigset_glibc(int sig, sighandler_t h) __attribute__((visibility("default")));
int rec__sigignore_glibc(int sig) __attribute__((visibility("default")));
void rec__longjmp_glibc(struct __jmp_buf_tag *env, int val)
	__attribute__((visibility("default"), noreturn));
void rec__longjmp2_glibc(struct __jmp_buf_tag *env, int val)
	__attribute__((visibility("default"), noreturn));
void rec__siglongjmp_glibc(struct __jmp_buf_tag *env, int val)
	__attribute__((visibility("default"), noreturn));
void rec__longjmp_chk_glibc(struct __jmp_buf_tag *env, int val)
	__attribute__((visibility("default"), noreturn));
__asm__(".symver rec__sigaction_glibc, sigaction@" REC__GLIBC);
__asm__(".symver rec__sigaction2_glibc, __sigaction@" REC__GLIBC);
__asm__(".symver rec__signal_glibc, signal@" REC__GLIBC);
__asm__(".symver rec__ssignal_glibc, ssignal@" REC__GLIBC);
__asm__(".symver rec__bsd_signal_glibc, bsd_signal@" REC__GLIBC);
__asm__(".symver rec__sysv_signal_glibc, sysv_signal@" REC__GLIBC);
__asm__(".symver rec__sysv_signal2_glibc, __sysv_signal@" REC__GLIBC);
__asm__(".symver rec__sigset_glibc, sigset@" REC__GLIBC);
__asm__(".symver rec__sigignore_glibc, sigignore@" REC__GLIBC);
__asm__(".symver rec__longjmp_glibc, longjmp@" REC__GLIBC);
__asm__(".symver rec__longjmp2_glibc, _longjmp@" REC__GLIBC);
__asm__(".symver rec__siglongjmp_glibc, siglongjmp@" REC__GLIBC);
__asm__(".symver rec__longjmp_chk_glibc, __longjmp_chk@" REC__STR(REC_GLIBC_LONGJMP_CHK_VERSION));

int rec__sigaction_glibc(int sig, const struct sigaction *act, struct sigaction *old)
{
	return wrap_sigaction(sig, act, old);
}

int rec__sigaction2_glibc(int sig, const struct sigaction *act, struct sigaction *old)
{
	return wrap_sigaction(sig, act, old);
}

sighandler_t rec__signal_glibc(int sig, sighandler_t h)
{
	return wrap_signal(NEXT_SIGNAL, sig, h, SA_RESTART);
}

sighandler_t rec__ssignal_glibc(int sig, sighandler_t h)
{
	return wrap_signal(NEXT_SIGNAL, sig, h, SA_RESTART);
}

sighandler_t rec__bsd_signal_glibc(int sig, sighandler_t h)
{
	return wrap_signal(NEXT_BSD_SIGNAL, sig, h, SA_RESTART);
}

sighandler_t rec__sysv_signal_glibc(int sig, sighandler_t h)
{
	return wrap_signal(NEXT_SYSV_SIGNAL, sig, h, SA_RESETHAND | SA_NODEFER);
}

sighandler_t rec__sysv_signal2_glibc(int sig, sighandler_t h)
{
	return wrap_signal(NEXT_SYSV_SIGNAL, sig, h, SA_RESETHAND | SA_NODEFER);
}

sighandler_t rec__sigset_glibc(int sig, sighandler_t h)
{
	return wrap_sigset(sig, h);
}

int rec__sigignore_glibc(int sig)
{
	return wrap_sigignore(sig);
}

void rec__longjmp_glibc(struct __jmp_buf_tag *env, int val)
{
	wrap_jump(NEXT_LONGJMP, env, val);
}

void rec__longjmp2_glibc(struct __jmp_buf_tag *env, int val)
{
	wrap_jump(NEXT_LONGJMP, env, val);
}

void rec__siglongjmp_glibc(struct __jmp_buf_tag *env, int val)
{
	wrap_jump(NEXT_LONGJMP, env, val);
}

void rec__longjmp_chk_glibc(struct __jmp_buf_tag *env, int val)
{
	wrap_jump(NEXT_LONGJMP_CHK, env, val);
}
#endif

/* ---------------------------------------------------------------------
 * Start: at load (lifecycle.c's constructor) when REC_SAMPLE is set.
 */

/* A real-time signal no one handles, from the top (glibc keeps the lowest). */
static int pick_signal(void)
{
	for (int s = SIGRTMAX; s >= SIGRTMIN + 4; s--) {
		struct sigaction old;

		if (sigaction(s, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL)
			return s;
	}
	return 0;
}

int rec__sample_init(uint32_t hz, bool (*start)(void), void (*note)(const char *why))
{
	struct sigaction sa;
	struct rlimit rl;
	void *gcc;
	uint64_t id;
	int fd;

	if (S.ready || hz == 0)
		return 0;
	S.hz = hz;
	S.start = start;
	S.note = note;
	S.period_ns = (1000000000ull + hz / 2) / hz;
	/* libgcc_s: already loaded by most programs (C++, glibc's cancellation). */
	gcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
	S.backtrace = gcc ? dlsym(gcc, "_Unwind_Backtrace") : NULL;
	S.get_ip_info = gcc ? dlsym(gcc, "_Unwind_GetIPInfo") : NULL;
	if (!S.backtrace || !S.get_ip_info) {
		rec__log("REC_SAMPLE: cannot load the unwinder (libgcc_s.so.1: %s); no samples",
			 dlerror());
		return -ENOENT;
	}
	unwinder_code();
	S.signo = pick_signal();
	if (!S.signo) {
		rec__log("REC_SAMPLE: every real-time signal is taken by the program; no samples");
		return -EBUSY;
	}
	/* Its one-time set-up now, not in the first handler. */
	{
		uint64_t f[REC__SAMPLE_MAX_FRAMES];
		struct walk w = { .f = f, .max = REC__SAMPLE_MAX_FRAMES };

		S.backtrace(walk_frame, &w);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	/*
	 * Not SA_ONSTACK: a host's alternate stack is sized for its own handler
	 * (often SIGSTKSZ, 8 KiB, or less), and the kernel's frame and an unwind
	 * overflow it; the interrupted stack is the thread's own, as the host's
	 * SA_ONSTACK handlers block this signal (shield()).
	 */
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask); /* nothing of the host's runs inside a sample */
	/* But a fault of the walk reaches librec's crash handler, which comes back (F37). */
	sigdelset(&sa.sa_mask, SIGSEGV);
	sigdelset(&sa.sa_mask, SIGBUS);
	if (sigaction(S.signo, &sa, NULL) < 0) {
		rec__log("REC_SAMPLE: cannot install the signal handler: %s; no samples",
			 strerror(errno));
		return -errno;
	}
	/* perf fds at most: a quarter of the descriptors the process may have. */
	S.perf_max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
			     ? (uint32_t)(rl.rlim_cur / 4)
			     : 256;
	fd = perf_open(0, S.period_ns);
	if (fd >= 0 && ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0) {
		S.perf_ok = true;
		S.mech = RECFMT_SAMPLE_MECH_PERF_TASK_CLOCK;
		S.clock = RECFMT_SAMPLE_CLOCK_THREAD_USER;
	} else {
		int err = errno;
		FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
		int paranoid = -9;

		if (f) {
			if (fscanf(f, "%d", &paranoid) != 1)
				paranoid = -9;
			fclose(f);
		}
		S.mech = RECFMT_SAMPLE_MECH_TIMER;
		S.clock = RECFMT_SAMPLE_CLOCK_THREAD_CPU;
		if (paranoid != -9)
			rec__log("REC_SAMPLE: perf_event_open refused (%s; perf_event_paranoid %d): "
				 "sampling on CPU-time timers, at most the kernel's tick rate",
				 strerror(err), paranoid);
		else
			rec__log("REC_SAMPLE: perf_event_open refused (%s): sampling on CPU-time "
				 "timers, at most the kernel's tick rate", strerror(err));
	}
	if (fd >= 0)
		close(fd);
	rec__thread_exit_hook = rec__sample_thread_exit;
	/* The wrappers' functions now, not first in a host's handler. */
	for (int i = 0; i < NEXT_NR; i++)
		next_fn((enum next)i);
#ifdef REC__THREAD_HOOK
#if defined(__aarch64__)
	S.ptr_guard = dlsym(RTLD_DEFAULT, "__pointer_chk_guard");
#endif
	S.jump_sp_ok = jump_sp_works();
	{
		/* What wrap_jump() calls on an alternate stack, bound now: lazy
		 * binding's resolver saves the vector registers on the stack
		 * (2.5 KiB and more with AVX-512), which the host sized for its
		 * handler alone. */
		sigset_t cur;
		stack_t ss;

		if (pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0)
			(void)sigismember(&cur, S.signo);
		sigaltstack(NULL, &ss);
	}
#endif
	shield_present();
	__atomic_store_n(&S.ready, 1, __ATOMIC_RELEASE);
	arm_all_present();
	return 0;
}

/*
 * rec__sample_fork_child() - in a child after fork: the parent's clocks
 * are not this process's (the perf fds are copies of the parent's threads'
 * events; timers are not inherited). Forget them; if the child records
 * (%p), arm its one thread.
 */
void rec__sample_fork_child(bool records)
{
#if defined(REC_SANITIZED)
	nr_runtime_tid = 0; /* the parent's; the child's first thread finds its own */
	runtime_seen = false;
#endif
	if (!S.ready)
		return;
	pthread_mutex_init(&S.reg_lock, NULL);
	for (uint32_t i = 0; i < S.nr_reg; i++)
		if (S.reg[i].tid && S.reg[i].fd >= 0)
			close(S.reg[i].fd);
	S.nr_reg = 0;
	S.perf_live = 0;
	if (records)
		arm((pid_t)gettid());
	else
		__atomic_store_n(&S.ready, 0, __ATOMIC_RELEASE);
}
