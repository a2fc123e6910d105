/* SPDX-License-Identifier: MIT */
/*
 * bench_flight_idle.c - the writer thread's CPU time while a program runs,
 * in whatever mode the environment says (REC_MODE=flight or stream): THREADS
 * threads each record RATE activations a second (in bursts every 10 ms) for
 * SECONDS, then the writer's CPU time (utime + stime of the thread named
 * rec-writer, from /proc's schedstat) is printed as a share of one core, with the
 * run's own CPU time for scale. RATE 0: the threads record one activation
 * and then sleep (an idle program).
 *
 * Usage: bench_flight_idle [SECONDS [THREADS [RATE]]]   (defaults 10 4 10000)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double seconds = 10;
static long rate = 10000;
static int stop_flag;
static __thread volatile unsigned sink;

__attribute__((noinline)) static void work(void)
{
	TRACE_SCOPE();
	sink++;
}

static void *worker(void *arg)
{
	struct timespec nap = { 0, 10 * 1000 * 1000 };

	(void)arg;
	work();
	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
		for (long i = 0; i < rate / 100; i++)
			work();
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* CPU seconds of the thread named `comm`, or of the whole process if NULL
 * (schedstat's first field: ns on a CPU, precise where stat has 10 ms ticks). */
static double cpu_s(const char *comm)
{
	double sum = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[300], name[64] = "";
		unsigned long long ns;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if ((f = fopen(path, "r"))) {
			if (fgets(name, sizeof(name), f))
				name[strcspn(name, "\n")] = 0;
			fclose(f);
		}
		if (comm && strcmp(name, comm))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fscanf(f, "%llu", &ns) == 1)
			sum += (double)ns / 1e9;
		fclose(f);
	}
	if (d)
		closedir(d);
	return sum;
}

int main(int argc, char **argv)
{
	int nr = 4;
	pthread_t t[64];
	struct timespec run;
	const char *mode = getenv("REC_MODE");

	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 2)
		nr = atoi(argv[2]);
	if (argc > 3)
		rate = atol(argv[3]);
	if (nr < 1 || nr > 64 || seconds <= 0 || rate < 0) {
		fprintf(stderr, "usage: bench_flight_idle [SECONDS [THREADS [RATE]]]\n");
		return 2;
	}
	work();
	for (int i = 0; i < nr; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	run.tv_sec = (time_t)seconds;
	run.tv_nsec = (long)((seconds - (double)run.tv_sec) * 1e9);
	nanosleep(&run, NULL);
	double w = cpu_s("rec-writer"), all = cpu_s(NULL);
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nr; i++)
		pthread_join(t[i], NULL);
	printf("mode %s, %d threads x %ld activations/s, %.1f s: writer %.3f%% of a core "
	       "(%.0f ms), whole process %.3f%%\n",
	       mode && *mode ? mode : "stream", nr, rate, seconds, 100 * w / seconds, w * 1000,
	       100 * all / seconds);
	return 0;
}
