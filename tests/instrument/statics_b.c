/* SPDX-License-Identifier: MIT */
/* statics_b.c - the second static init (statics_a.c). */
int b_entry(int n);
static __attribute__((noinline)) int init(int n)
{
	return n + 7;
}

int b_entry(int n)
{
	int acc = 0;

	for (int i = 0; i < n; i++)
		acc += init(i);
	return acc;
}
