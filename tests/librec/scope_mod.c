/* SPDX-License-Identifier: MIT */
/*
 * scope_mod.c - a module with TRACE_SCOPE probes that test_host.c loads
 * with dlopen() and unloads with dlclose(): its sites, names and file name
 * live in this module's memory, which is gone after dlclose().
 */
#include <rec.h>

int mod_work(int n);

static int mod_leaf(int x)
{
	TRACE_SCOPE();
	return x + 1;
}

int mod_work(int n)
{
	TRACE_SCOPE();
	int sum = 0;

	for (int i = 0; i < n; i++)
		sum += mod_leaf(i);
	return sum;
}
