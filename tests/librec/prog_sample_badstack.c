/* SPDX-License-Identifier: MIT */
/*
 * prog_sample_badstack.c - a function that runs on a stack of its own whose
 * words are no return addresses (as a coroutine library's switch does for a
 * few instructions, greenlet's or boost.context's, where the unwind tables
 * still describe the old stack), for REC_SAMPLE (finding F37): a sample
 * there walks to a bad pc; the walk faulted and the process died of
 * SIGSEGV. librec's crash handler now takes the walk back: the program must
 * run to its end, exit 0. x86-64 only (exit 77, skipped, elsewhere). ARG:
 * how many spins on that stack (default 20000, about 1 ms of CPU each).
 */
#include <stdint.h>
#include <stdlib.h>

#if defined(__x86_64__)
/* The other stack: a 0x10 in every word, an address nothing is mapped at. */
static uint64_t other[1 << 16];

__attribute__((noinline)) static void spin_on_other_stack(long n)
{
	__asm__ volatile("movq %%rsp, %%r12\n\t"
			 "movq %1, %%rsp\n\t"
			 "1: decq %0\n\t"
			 "jnz 1b\n\t"
			 "movq %%r12, %%rsp\n\t"
			 : "+r"(n)
			 : "r"(other + (1 << 16) - 64)
			 : "r12", "memory", "cc");
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20000;

	for (long i = 0; i < (long)(sizeof(other) / sizeof(other[0])); i++)
		other[i] = 0x10;
	for (long r = 0; r < rounds; r++)
		spin_on_other_stack(1000000);
	return 0;
}
#else
int main(void)
{
	return 77;
}
#endif
