/* SPDX-License-Identifier: MIT */
/*
 * rec_short_threads.c - the librec recording behind corpus/index/
 * librec_packed_index (README.md): ROUNDS rounds of THREADS short threads
 * (a thread per request, one scope "request" calling "step"), main's
 * "round" open around each, then rec_flush(), so that each round is a frame
 * of its own after the first. Such a frame is mostly THREAD and THREAD_END
 * records and a block of two events a thread, and librec packs its index
 * frame (FORMAT.md §6.3: 256 bytes or more, over half its data frame, not
 * the file's first). Built with the tests; never run by meson test.
 *
 *     REC_OUTPUT=x.zst rec_short_threads [ROUNDS [THREADS]]   (default 4, 24)
 */
#include <pthread.h>
#include <rec.h>
#include <stdint.h>
#include <stdlib.h>

static volatile unsigned sink;

static void __attribute__((noinline)) step(unsigned i)
{
	TRACE_SCOPE_NAMED("step");
	sink += i;
}

static void *request(void *arg)
{
	TRACE_SCOPE_NAMED("request");
	step((unsigned)(uintptr_t)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	const unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
	const unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : 24;

	for (unsigned r = 0; r < rounds; r++) {
		{
			TRACE_SCOPE_NAMED("round");

			for (unsigned i = 0; i < threads; i++) {
				pthread_t t;

				if (pthread_create(&t, NULL, request, (void *)(uintptr_t)i) != 0 ||
				    pthread_join(t, NULL) != 0)
					return 1;
			}
		}
		if (rec_flush() != 0)
			return 1;
	}
	return 0;
}
