/* SPDX-License-Identifier: MIT */
/*
 * prog_sample.c - a program that knows nothing of rec (not linked with
 * librec, no probe), built -O2 without frame pointers, run by test_sample.c
 * under LD_PRELOAD=librectrace.so REC_SAMPLE=HZ. Each mode is one hostile
 * case of issue 28 item 4; each prints what the test checks against.
 *
 *   work MS        CPU work in main and one thread (qsort: program -> libc ->
 *                  program): prints "cpu_ns N" and "work ADDR" "cmp ADDR"
 *   churn N        N threads started and joined, 64 at a time, each a little work;
 *                  then waits (60 s at most) until their clocks are gone
 *   dlopen N PATH  dlopen, call, dlclose a library N times, working in it
 *   dlrotate N P0 P1 P2  N times: dlopen library i % 3, work in it 0.2 ms
 *                  through call_lib<i % 3>(), dlclose the one opened before:
 *                  two open at a time, so each is mapped where another was
 *   malloc MS      4 threads malloc/free flat out for MS of CPU each
 *   fork MS        work, fork a child that works MS too, wait for it
 *   exec N         work, then exec itself N - 1 more times (exec 0: exit 0)
 *   sigprof MS     its own SIGPROF profiler (setitimer ITIMER_PROF, 100 Hz)
 *                  while it works: prints "sigprof N"
 *   abort MS       works, then abort(): crash capture
 *   blocked MS     a thread that blocks every signal works MS, then takes the
 *                  real-time signals queued for it meanwhile: prints "queued N"
 *   altstack MS    main on an 8 KiB alternate signal stack (the old SIGSTKSZ),
 *                  one thread on a 32 KiB one, both work MS; the thread then
 *                  runs a SIGUSR1 handler (SA_ONSTACK) that works 20 ms of CPU
 *                  on its alternate stack, 3 times: prints "onstack N"
 *   longjmp MS HOW a thread on an alternate stack sized for its handler alone
 *                  (the kernel's frame and 2 KiB, a guard page below) takes a
 *                  SIGUSR1 handler (SA_ONSTACK) that works 20 ms of CPU there
 *                  and leaves by a jump, 5 times: HOW plain (setjmp/longjmp),
 *                  sig (sigsetjmp saving the mask/siglongjmp) or chk
 *                  (__longjmp_chk, _FORTIFY_SOURCE's longjmp), or own (plain,
 *                  no alternate stack: the handler on the thread's stack);
 *                  then works MS. Prints "jumped N" and "rt_blocked N", the
 *                  jumps after which the thread blocked a real-time signal,
 *                  and "kept_blocked 1" if a longjmp() outside any handler,
 *                  every signal blocked, leaves them blocked
 *   unhooked N     N threads made with libc's own pthread_create, past librec's
 *                  wrapper (as clone() or a static thread library would make
 *                  them): waits until the writer's scan armed them (N more
 *                  clocks: perf fds or POSIX timers), prints "armed K"; half
 *                  of them work 150 ms of CPU, the others none; all exit;
 *                  waits until their clocks are gone, prints "left K"
 * Every mode prints "pid N" first, "fds N" (its open descriptors) and
 * "cpu_us N" (user CPU time) last.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double cpu_ms(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Sorts until this thread used `ms` of CPU. */
__attribute__((noinline)) static double work(double ms)
{
	enum { N = 4000 };
	double *a = malloc(N * sizeof(*a)), s = 0, until = cpu_ms(CLOCK_THREAD_CPUTIME_ID) + ms;

	for (unsigned r = 0; cpu_ms(CLOCK_THREAD_CPUTIME_ID) < until; r++) {
		for (unsigned i = 0; i < N; i++)
			a[i] = (double)((i * 7919u + r) % 10007u);
		qsort(a, N, sizeof(*a), cmp);
		s += a[r % N];
	}
	free(a);
	return s;
}

/* One caller per library of dlrotate, so that a sample's stack says which
 * library it was in: call_libK() -> sample_mod_work() of library K (each
 * adds its own k, so that no compiler folds the three into one). */
#define CALL_LIB(k)                                                                               \
	__attribute__((noinline)) static double call_lib##k(double (*f)(double))                  \
	{                                                                                         \
		volatile double r = f(0.2) + k;                                                   \
		return r;                                                                         \
	}
CALL_LIB(0)
CALL_LIB(1)
CALL_LIB(2)

static int dlrotate(int n, char **paths)
{
	double (*const call[3])(double (*)(double)) = { call_lib0, call_lib1, call_lib2 };
	void *prev = NULL;

	for (int i = 0; i < n; i++) {
		void *h = dlopen(paths[i % 3], RTLD_NOW | RTLD_LOCAL);
		double (*f)(double);

		if (!h)
			return 4;
		f = (double (*)(double))dlsym(h, "sample_mod_work");
		if (!f || call[i % 3](f) < 0)
			return 5;
		if (prev)
			dlclose(prev);
		prev = h;
	}
	if (prev)
		dlclose(prev);
	return 0;
}

static void *work_thread(void *arg)
{
	work(*(double *)arg);
	return NULL;
}

static volatile sig_atomic_t nr_onstack;
static volatile double onstack_sum;
/* Works 20 ms of this thread's CPU on the alternate stack, using little of it. */
static void on_usr1(int sig)
{
	double end = cpu_ms(CLOCK_THREAD_CPUTIME_ID) + 20;

	(void)sig;
	while (cpu_ms(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			onstack_sum += i * 0.5;
	nr_onstack++;
}

static char altstack_small[8192], altstack_large[32768];

/* arg: the work's ms; large: on altstack_large, and runs the handler there. */
static void *altstack_work(double ms, bool large)
{
	stack_t st = { .ss_sp = large ? altstack_large : altstack_small,
		       .ss_size = large ? sizeof(altstack_large) : sizeof(altstack_small) };

	if (sigaltstack(&st, NULL))
		return (void *)1;
	work(ms);
	for (int i = 0; large && i < 3; i++)
		pthread_kill(pthread_self(), SIGUSR1);
	return NULL;
}

static void *altstack_thread(void *arg)
{
	return altstack_work(*(double *)arg, true);
}

/* longjmp mode: how the handler leaves, where to, and what the thread saw after. */
extern void __longjmp_chk(struct __jmp_buf_tag *env, int val) __attribute__((noreturn));
static const char *jump_how;
static sigjmp_buf jump_env;
static int jumped, rt_blocked, kept_blocked;

static void on_usr1_jump(int sig)
{
	double end = cpu_ms(CLOCK_THREAD_CPUTIME_ID) + 20;

	(void)sig;
	while (cpu_ms(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			onstack_sum += i * 0.5;
	if (strcmp(jump_how, "sig") == 0)
		siglongjmp(jump_env, 1);
	else if (strcmp(jump_how, "chk") == 0)
		__longjmp_chk(jump_env, 1);
	longjmp(jump_env, 1);
}

/* Under AddressSanitizer the handler alone (instrumented, its longjmp
 * interceptor) needs more than a tight stack holds, with or without rec. */
#if defined(__SANITIZE_ADDRESS__)
#define JUMP_STACK_MORE 65536
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JUMP_STACK_MORE 65536
#endif
#endif
#ifndef JUMP_STACK_MORE
#define JUMP_STACK_MORE 0
#endif

static void *jump_thread(void *arg)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), min = getauxval(AT_MINSIGSTKSZ);
	size_t size = (min ? min : 2048) + 2048 + JUMP_STACK_MORE;
	size_t map = page + ((size + page - 1) / page) * page;
	char *m = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stack_t st;

	sigset_t all, was, now;
	static jmp_buf plain_env;

	if (m == MAP_FAILED || mprotect(m, page, PROT_NONE))
		return (void *)1;
	st.ss_sp = m + page; /* its lowest byte right above the guard page */
	st.ss_size = size;
	st.ss_flags = 0;
	if (strcmp(jump_how, "own") != 0 && sigaltstack(&st, NULL))
		return (void *)1;
	for (volatile int i = 0; i < 5; i++) {
		sigset_t in;

		if (strcmp(jump_how, "sig") == 0) {
			if (sigsetjmp(jump_env, 1) == 0) {
				pthread_kill(pthread_self(), SIGUSR1);
				return (void *)1; /* the handler jumps: never here */
			}
		} else if (setjmp(jump_env) == 0) {
			pthread_kill(pthread_self(), SIGUSR1);
			return (void *)1;
		}
		jumped++;
		pthread_sigmask(SIG_BLOCK, NULL, &in);
		for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
			if (sigismember(&in, sig)) {
				rt_blocked++;
				break;
			}
	}
	/* A jump in no handler, every signal blocked: the mask is the host's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &was);
	if (setjmp(plain_env) == 0)
		longjmp(plain_env, 1);
	pthread_sigmask(SIG_SETMASK, &was, &now);
	kept_blocked = sigismember(&now, SIGRTMAX) == 1;
	work(*(double *)arg);
	return NULL;
}

/* Works with every signal blocked, then counts the real-time signals queued. */
static void *blocked_thread(void *arg)
{
	static const struct timespec zero;
	sigset_t all, pending;
	long n = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	work(*(double *)arg);
	sigpending(&pending);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) {
		sigset_t one;

		if (!sigismember(&pending, sig))
			continue;
		sigemptyset(&one);
		sigaddset(&one, sig);
		while (sigtimedwait(&one, NULL, &zero) == sig)
			n++;
	}
	return (void *)n;
}

static void *churn_thread(void *arg)
{
	(void)arg;
	work(0.05);
	return NULL;
}

static volatile sig_atomic_t nr_sigprof;
static void on_sigprof(int sig)
{
	(void)sig;
	nr_sigprof++;
}

static void *malloc_thread(void *arg)
{
	double until = cpu_ms(CLOCK_THREAD_CPUTIME_ID) + *(double *)arg;
	void *p[64] = { 0 };

	for (unsigned i = 0; cpu_ms(CLOCK_THREAD_CPUTIME_ID) < until; i++) {
		free(p[i % 64]);
		p[i % 64] = malloc(16 + (i * 37u) % 4000);
	}
	for (unsigned i = 0; i < 64; i++)
		free(p[i]);
	return NULL;
}

/* librec's clocks in this process: perf events among the fds, POSIX timers. */
static int clocks(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], link[64], line[128];
	int n = 0;
	FILE *f;

	while (d && (e = readdir(d))) {
		ssize_t k;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		k = readlink(path, link, sizeof(link) - 1);
		if (k > 0) {
			link[k] = 0;
			n += strstr(link, "perf_event") != NULL;
		}
	}
	if (d)
		closedir(d);
	f = fopen("/proc/self/timers", "r");
	while (f && fgets(line, sizeof(line), f))
		n += strncmp(line, "ID:", 3) == 0;
	if (f)
		fclose(f);
	return n;
}

static volatile int unhooked_go;

static void *unhooked_thread(void *arg)
{
	while (!unhooked_go)
		usleep(1000);
	if ((long)arg % 2 == 0)
		work(150);
	return NULL;
}

/* Waits (10 ms steps, at most 60 s) until clocks() - base is `want` or, if
 * !at_least, at most it. Return: clocks() - base then. */
static int wait_clocks(int base, int want, bool at_least)
{
	int n = clocks() - base;

	for (int i = 0; i < 6000 && (at_least ? n < want : n > want); i++) {
		usleep(10000);
		n = clocks() - base;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "work";
	double ms = argc > 2 ? atof(argv[2]) : 200;
	struct rusage ru;

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (strcmp(mode, "work") == 0) {
		pthread_t t;

		printf("work %p\ncmp %p\nmain %p\n", (void *)work, (void *)cmp, (void *)main);
		pthread_create(&t, NULL, work_thread, &ms);
		work(ms);
		pthread_join(t, NULL);
	} else if (strcmp(mode, "churn") == 0) {
		int n = (int)ms, base = clocks();
		pthread_t t[64];

		for (int i = 0; i < n; i += 64) {
			int k = n - i < 64 ? n - i : 64;

			for (int j = 0; j < k; j++)
				if (pthread_create(&t[j], NULL, churn_thread, NULL))
					return 3;
			for (int j = 0; j < k; j++)
				pthread_join(t[j], NULL);
		}
		/* A thread that ended before it had state is disarmed by the
		 * writer's next scan (100 ms; more on a loaded machine). */
		wait_clocks(base, 0, false);
	} else if (strcmp(mode, "dlopen") == 0) {
		for (int i = 0; i < (int)ms; i++) {
			void *h = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
			double (*f)(double);

			if (!h)
				return 4;
			f = (double (*)(double))dlsym(h, "sample_mod_work");
			if (!f || f(0.2) < 0)
				return 5;
			dlclose(h);
		}
	} else if (strcmp(mode, "dlrotate") == 0) {
		int err = argc > 5 ? dlrotate((int)ms, argv + 3) : 2;

		if (err)
			return err;
	} else if (strcmp(mode, "malloc") == 0) {
		pthread_t t[4];

		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, malloc_thread, &ms);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	} else if (strcmp(mode, "fork") == 0) {
		int st;
		pid_t pid;

		work(ms / 2);
		pid = fork();
		if (pid == 0) {
			work(ms);
			exit(0); /* librec's exit handler ends the child's file */
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 6;
		printf("child %d\n", (int)pid);
	} else if (strcmp(mode, "exec") == 0) {
		char n[16];

		if ((int)ms <= 0)
			return 0;
		work(5);
		snprintf(n, sizeof(n), "%d", (int)ms - 1);
		execl("/proc/self/exe", argv[0], "exec", n, (char *)NULL);
		return 7;
	} else if (strcmp(mode, "sigprof") == 0) {
		struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sigprof;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGPROF, &sa, NULL);
		setitimer(ITIMER_PROF, &it, NULL);
		work(ms);
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_PROF, &it, NULL);
		printf("sigprof %d\n", (int)nr_sigprof);
	} else if (strcmp(mode, "unhooked") == 0) {
		enum { MAX = 64 };
		int n = (int)ms < MAX ? (int)ms : MAX, base = clocks();
		void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
		int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
		pthread_t t[MAX];

		create = libc ? (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
					 void *))dlvsym(libc, "pthread_create", "GLIBC_2.34")
			      : NULL;
		if (!create)
			return 4;
		for (long i = 0; i < n; i++)
			if (create(&t[i], NULL, unhooked_thread, (void *)i))
				return 3;
		printf("armed %d\n", wait_clocks(base, n, true));
		unhooked_go = 1;
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		printf("left %d\n", wait_clocks(base, 0, false));
	} else if (strcmp(mode, "blocked") == 0) {
		pthread_t t;
		void *n;

		if (pthread_create(&t, NULL, blocked_thread, &ms) || pthread_join(t, &n))
			return 3;
		printf("queued %ld\n", (long)n);
	} else if (strcmp(mode, "altstack") == 0) {
		struct sigaction sa;
		pthread_t t;
		void *rt;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sa.sa_flags = SA_ONSTACK | SA_RESTART;
		sigaction(SIGUSR1, &sa, NULL);
		pthread_create(&t, NULL, altstack_thread, &ms);
		if (altstack_work(ms, false) || pthread_join(t, &rt) || rt)
			return 8;
		printf("onstack %d\n", (int)nr_onstack);
	} else if (strcmp(mode, "longjmp") == 0) {
		struct sigaction sa;
		pthread_t t;
		void *rt;

		jump_how = argc > 3 ? argv[3] : "plain";
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1_jump;
		sa.sa_flags = SA_ONSTACK | SA_NODEFER;
		sigaction(SIGUSR1, &sa, NULL);
		if (pthread_create(&t, NULL, jump_thread, &ms) || pthread_join(t, &rt) || rt)
			return 9;
		printf("jumped %d\nrt_blocked %d\nkept_blocked %d\n", jumped, rt_blocked,
		       kept_blocked);
	} else if (strcmp(mode, "abort") == 0) {
		work(ms);
		abort();
	} else {
		return 2;
	}
	{
		DIR *d = opendir("/proc/self/fd");
		int n = -1; /* its own */

		while (d && readdir(d))
			n++;
		if (d)
			closedir(d);
		printf("fds %d\n", n - 2); /* less . and .. */
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("cpu_us %ld\n", (long)(ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec));
	return 0;
}
