/* SPDX-License-Identifier: MIT */
/*
 * dlmod.c - a module that prog_instr loads with dlopen() after start, built
 * with -finstrument-functions: librec must record it when its code runs.
 */
int dl_work(int n);

int dl_work(int n)
{
	return n + 3;
}
