/* SPDX-License-Identifier: MIT */
/*
 * prog_dlreuse.c - a plugin host (finding F16): ROUNDS times, opens a
 * library with dlopen(), calls its X_run(7) (7 calls of X_leaf), closes it
 * with dlclose(), either on the main thread, on a new thread each round, or
 * ("pairs", for the sanitizers) on two new threads at once, one with LIB_A
 * and one with LIB_B, so that each one's dlclose() marks the other's hooks'
 * cache stale while it runs. Never one library on two threads at once: the
 * dynamic loader's own locks, which ThreadSanitizer does not see, order
 * the second thread's use of the first one's loading.
 * Pattern "ab": LIB_B in every third round (0, 3, 6, ...), LIB_A in the
 * others, so that each is mapped where the other was; "a": LIB_A only
 * (ignored by "pairs").
 * Not instrumented itself. Prints, for the test, how many distinct load
 * addresses each library had and in how many rounds one of the library's
 * functions that run (X_run, X_leaf) was at an address where one of the
 * other's had been: one function's address, then another's.
 * Usage: prog_dlreuse LIB_A LIB_B ROUNDS main|thread|pairs ab|a
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <rec.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BASES 64

struct lib {
	const char *path, *run, *leaf;
	uintptr_t bases[MAX_BASES], fns[MAX_BASES];
	int nr_bases, nr_fns;
};

static struct lib libs[2];
static int reused;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int seen(const uintptr_t *v, int n, uintptr_t a)
{
	for (int i = 0; i < n; i++)
		if (v[i] == a)
			return 1;
	return 0;
}

static void *round_of(void *arg)
{
	struct lib *l = arg, *other = l == &libs[0] ? &libs[1] : &libs[0];
	void *h = dlopen(l->path, RTLD_NOW | RTLD_LOCAL);
	void (*run)(int);
	uintptr_t fns[2];
	int met = 0;
	Dl_info info;

	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		exit(2);
	}
	run = (void (*)(int))(uintptr_t)dlsym(h, l->run);
	fns[0] = (uintptr_t)run;
	fns[1] = (uintptr_t)dlsym(h, l->leaf);
	if (!run || !fns[1] || !dladdr((void *)(uintptr_t)run, &info))
		exit(3);
	pthread_mutex_lock(&lock);
	for (int i = 0; i < 2; i++) {
		met |= seen(other->fns, other->nr_fns, fns[i]);
		if (!seen(l->fns, l->nr_fns, fns[i]) && l->nr_fns < MAX_BASES)
			l->fns[l->nr_fns++] = fns[i];
	}
	reused += met;
	if (!seen(l->bases, l->nr_bases, (uintptr_t)info.dli_fbase) && l->nr_bases < MAX_BASES)
		l->bases[l->nr_bases++] = (uintptr_t)info.dli_fbase;
	pthread_mutex_unlock(&lock);
	run(7);
	if (dlclose(h) != 0 || dlopen(l->path, RTLD_NOW | RTLD_NOLOAD))
		exit(4); /* not unloaded: the test would test nothing */
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds, threads, pairs;
	const char *pattern;

	/*
	 * A plugin host linked with librec: one call to it keeps the link,
	 * which --as-needed drops otherwise when the host's dlclose() binds to
	 * a sanitizer's interceptor (the libraries would then load and unload
	 * librec with them, its writer thread included).
	 */
	if (argc != 6 || !rec_version())
		return 1;
	libs[0] = (struct lib){ .path = argv[1], .run = "alpha_run", .leaf = "alpha_leaf" };
	libs[1] = (struct lib){ .path = argv[2], .run = "beta_run", .leaf = "beta_leaf" };
	rounds = atoi(argv[3]);
	threads = strcmp(argv[4], "thread") == 0;
	pairs = strcmp(argv[4], "pairs") == 0;
	pattern = argv[5];
	for (int r = 0; r < rounds; r += pairs ? 2 : 1) {
		struct lib *l = strcmp(pattern, "ab") == 0 && r % 3 == 0 ? &libs[1] : &libs[0];
		pthread_t t, t2;

		if (pairs) {
			if (pthread_create(&t, NULL, round_of, &libs[0]) != 0 ||
			    pthread_create(&t2, NULL, round_of, &libs[1]) != 0 || pthread_join(t, NULL) != 0 ||
			    pthread_join(t2, NULL) != 0)
				return 5;
		} else if (!threads) {
			round_of(l);
		} else if (pthread_create(&t, NULL, round_of, l) != 0 || pthread_join(t, NULL) != 0) {
			return 5;
		}
	}
	printf("bases_a %d bases_b %d reused %d\n", libs[0].nr_bases, libs[1].nr_bases, reused);
	return 0;
}
