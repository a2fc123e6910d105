/* SPDX-License-Identifier: MIT */
/* sample_mod.c - a library prog_sample dlopens and dlcloses in a loop while sampled. */
#include <time.h>

double sample_mod_work(double ms);

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) double sample_mod_work(double ms)
{
	volatile double s = 0;
	double until = cpu_ms() + ms;

	while (cpu_ms() < until)
		for (int i = 0; i < 1000; i++)
			s += i * 0.5;
	return s;
}
