/* SPDX-License-Identifier: MIT */
/*
 * sample_cost.c - where the CPU time of sampling goes (docs/DESIGN.md
 * "Sampling", bench/sampling.sh cost): the hotspot demo's work (func_a and
 * func_b's loops, ROUNDS rounds), run under one of these clocks, each
 * delivering to this one thread at HZ per second of its CPU time:
 *
 *   plain         no clock
 *   perf-nosig    perf task-clock event, sample_period 1e9/HZ, user mode,
 *                 no signal: the kernel's hrtimer and overflow alone
 *   perf-empty    the same event, F_SETSIG real-time signal, empty handler
 *   perf-unwind   the same, the handler runs _Unwind_Backtrace (libgcc_s)
 *   perf-ring     the event with a mapped ring, PERF_SAMPLE_REGS_USER and
 *                 8 KiB of PERF_SAMPLE_STACK_USER a sample, no signal (the
 *                 way of perf --call-graph=dwarf); AB drains it each chunk;
 *                 "signals" are then the bytes it wrote
 *   perf-ring0    the same with IP, TID and TIME only
 *   found         a perf event this process already has (librec's, under
 *                 LD_PRELOAD=librectrace.so REC_SAMPLE=HZ): with AB_CHUNK only
 *   timer-empty   timer_create(CLOCK_THREAD_CPUTIME_ID), SIGEV_THREAD_ID,
 *                 empty handler (the scheduler tick checks it: <= CONFIG_HZ)
 *
 * SPARE_THREADS=N adds N threads that only wait; THREADS=1 prints each
 * thread's CPU time and voluntary switches (/proc/self/task) at the end.
 * Prints "MODE signals user_s sys_s" (getrusage RUSAGE_SELF at the end).
 * Usage: sample_cost MODE HZ ROUNDS. Run by bench/sampling.sh, not by
 * meson test.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static volatile uint64_t signals, frames;

NOINLINE static void func_a(void)
{
	for (unsigned long i = 0; i < 100000; i++)
		sink += i;
}

NOINLINE static void func_b(void)
{
	for (unsigned long i = 0; i < 400000; i++)
		sink += i;
}

static void on_empty(int signo, siginfo_t *si, void *uc)
{
	(void)signo;
	(void)si;
	(void)uc;
	signals++;
}

static _Unwind_Reason_Code count_frame(struct _Unwind_Context *ctx, void *arg)
{
	(void)ctx;
	(void)arg;
	frames++;
	return _URC_NO_REASON;
}

static void on_unwind(int signo, siginfo_t *si, void *uc)
{
	(void)signo;
	(void)si;
	(void)uc;
	signals++;
	_Unwind_Backtrace(count_frame, NULL);
}

static void handler(void (*fn)(int, siginfo_t *, void *))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(SIGRTMAX, &sa, NULL) < 0) {
		perror("sigaction");
		exit(1);
	}
}

static int perf_fd = -1;
static struct perf_event_mmap_page *ring; /* perf-ring's */
static size_t ring_bytes;

/* perf-ring: the event writes IP, registers and STACK bytes of user stack a
 * sample into a mapped ring (perf --call-graph=dwarf's way), no signal. */
static void arm_ring(uint64_t period, uint32_t stack)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = period;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			(stack ? PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER : 0);
	a.sample_regs_user = stack ? 0xff0fff : 0; /* x86-64: the 16 GPRs and IP (perf's set) */
	a.sample_stack_user = stack;
	a.wakeup_events = 1u << 30;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	perf_fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (perf_fd < 0) {
		perror("perf_event_open");
		exit(1);
	}
	ring_bytes = (size_t)(1 + 64) * 4096;
	ring = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, perf_fd, 0);
	if (ring == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
}

/* Everything in the ring read (a reader that keeps up), counted. */
static void drain_ring(void)
{
	uint64_t head;

	if (!ring)
		return;
	head = __atomic_load_n(&ring->data_head, __ATOMIC_ACQUIRE);
	signals += (head - ring->data_tail) / 1; /* bytes, for the report */
	__atomic_store_n(&ring->data_tail, head, __ATOMIC_RELEASE);
}

static void arm_perf(uint64_t period, int signal)
{
	struct perf_event_attr a;
	struct f_owner_ex owner = { F_OWNER_TID, (pid_t)syscall(SYS_gettid) };
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = period;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		perror("perf_event_open");
		exit(1);
	}
	if (signal && (fcntl(fd, F_SETOWN_EX, &owner) < 0 || fcntl(fd, F_SETSIG, SIGRTMAX) < 0 ||
		       fcntl(fd, F_SETFL, O_ASYNC) < 0)) {
		perror("fcntl");
		exit(1);
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	perf_fd = fd;
}

static void arm_timer(uint64_t period)
{
	struct sigevent sev;
	struct itimerspec its;
	timer_t t;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMAX;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t) < 0) {
		perror("timer_create");
		exit(1);
	}
	its.it_interval.tv_sec = (time_t)(period / 1000000000u);
	its.it_interval.tv_nsec = (long)(period % 1000000000u);
	its.it_value = its.it_interval;
	timer_settime(t, 0, &its, NULL);
}

/* A perf event someone else opened for this thread (librec under LD_PRELOAD). */
static int find_perf_fd(void)
{
	char path[64], link[64];

	for (int fd = 3; fd < 65536; fd++) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = 0;
			if (strstr(link, "perf_event"))
				return fd;
		}
	}
	fprintf(stderr, "sample_cost: no perf event among this process's descriptors\n");
	exit(1);
}

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * AB: the perf event's cost measured inside one process, robust to a
 * loaded machine: chunks of CHUNK rounds alternately with the event
 * enabled and disabled (PERF_EVENT_IOC_ENABLE/DISABLE), the thread's CPU
 * time of each; prints the median of the pairs' ratios, and the cost per
 * signal.
 */
static void ab(const char *mode, unsigned long hz, long rounds, long chunk)
{
	long pairs = rounds / chunk / 2;
	double *r = calloc((size_t)pairs, sizeof(*r)), on = 0, off = 0, m;
	uint64_t sig0 = signals;

	for (long p = 0; p < pairs; p++) {
		double t[2];

		for (int k = 0; k < 2; k++) {
			/* Alternate the order, so that neither side is always first. */
			int enable = (k == 0) == (p % 2 == 0);
			double t0;

			ioctl(perf_fd, enable ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
			t0 = thread_cpu();
			for (long i = 0; i < chunk; i++) {
				func_a();
				func_b();
			}
			t[!enable] = thread_cpu() - t0;
			drain_ring();
		}
		on += t[0];
		off += t[1];
		r[p] = t[0] / t[1];
	}
	ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
	qsort(r, (size_t)pairs, sizeof(*r), cmp_double);
	/* ratio r = cost x periods / off, periods = on x HZ: cost = r / ((1 + r) HZ). */
	m = r[pairs / 2] - 1;
	printf("ab %s %lu Hz: %ld pairs of %ld rounds, on %.4f s, off %.4f s: median %+.2f %%, "
	       "%.1f us a period; signals %llu\n",
	       mode, hz, pairs, chunk, on, off, 100 * m, 1e6 * m / ((1 + m) * (double)hz),
	       (unsigned long long)(signals - sig0));
}

/* SPARE_THREADS=N: N threads that wait, unsampled CPU-wise, until exit. */
static void *spare(void *arg)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

	(void)arg;
	pthread_mutex_lock(&m);
	for (;;)
		pthread_cond_wait(&c, &m);
	return NULL;
}

static void start_spares(long n)
{
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (long i = 0; i < n; i++) {
		pthread_t th;

		if (pthread_create(&th, &attr, spare, NULL)) {
			fprintf(stderr, "sample_cost: %ld spare threads only\n", i);
			break;
		}
	}
	pthread_attr_destroy(&attr);
}

/* With THREADS set: each thread's name, CPU time and voluntary switches now. */
static void print_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[300], comm[64] = "", line[256];
		unsigned long long run = 0;
		long vol = -1;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if ((f = fopen(path, "r"))) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%llu", &run) != 1)
				run = 0;
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		if ((f = fopen(path, "r"))) {
			while (fgets(line, sizeof(line), f))
				sscanf(line, "voluntary_ctxt_switches: %ld", &vol);
			fclose(f);
		}
		printf("thread %s %s: cpu %.4f s, voluntary switches %ld\n", e->d_name, comm,
		       (double)run / 1e9, vol);
	}
	if (d)
		closedir(d);
}

int main(int argc, char **argv)
{
	struct rusage ru;
	const char *mode;
	uint64_t period;
	unsigned long hz;
	long rounds;

	if (argc != 4) {
		fprintf(stderr, "usage: sample_cost plain|perf-nosig|perf-empty|perf-unwind|"
				"timer-empty HZ ROUNDS\n");
		return 2;
	}
	mode = argv[1];
	hz = strtoul(argv[2], NULL, 10);
	if (hz == 0) {
		fprintf(stderr, "sample_cost: HZ must be 1 or more\n");
		return 2;
	}
	period = 1000000000ull / hz;
	rounds = strtol(argv[3], NULL, 10);
	if (!strcmp(mode, "perf-nosig")) {
		arm_perf(period, 0);
	} else if (!strcmp(mode, "perf-empty")) {
		handler(on_empty);
		arm_perf(period, 1);
	} else if (!strcmp(mode, "perf-unwind")) {
		handler(on_unwind);
		_Unwind_Backtrace(count_frame, NULL); /* its one-time set-up */
		arm_perf(period, 1);
	} else if (!strcmp(mode, "timer-empty")) {
		handler(on_empty);
		arm_timer(period);
	} else if (!strcmp(mode, "perf-ring")) {
		arm_ring(period, 8192);
	} else if (!strcmp(mode, "perf-ring0")) {
		arm_ring(period, 0);
	} else if (!strcmp(mode, "found")) {
		perf_fd = find_perf_fd();
	} else if (strcmp(mode, "plain")) {
		fprintf(stderr, "sample_cost: unknown mode %s\n", mode);
		return 2;
	}
	if (getenv("SPARE_THREADS"))
		start_spares(strtol(getenv("SPARE_THREADS"), NULL, 10));
	if (getenv("AB_CHUNK") && perf_fd >= 0) {
		ab(mode, hz, rounds, strtol(getenv("AB_CHUNK"), NULL, 10));
		return 0;
	}
	for (long i = 0; i < rounds; i++) {
		func_a();
		func_b();
	}
	if (getenv("THREADS"))
		print_threads();
	getrusage(RUSAGE_SELF, &ru);
	printf("%s %llu %.4f %.4f\n", mode, (unsigned long long)signals,
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	return 0;
}
