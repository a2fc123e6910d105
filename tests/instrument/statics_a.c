/* SPDX-License-Identifier: MIT */
/* statics_a.c, statics_b.c - two static functions named init in two files of
 * one program (check_statics.sh): whole-program mode keeps them apart. */
#include <stdio.h>

int b_entry(int n);

static __attribute__((noinline)) int init(int n)
{
	return n * 3 + 1;
}

int main(void)
{
	int acc = 0;

	for (int i = 0; i < 2; i++)
		acc += init(i);
	acc += b_entry(5);
	printf("%d\n", acc);
	return 0;
}
