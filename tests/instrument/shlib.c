/* SPDX-License-Identifier: MIT */
/*
 * shlib.c - a shared library built with -finstrument-functions, linked by
 * prog_instr: its functions must be named through the library's own symbol
 * table and load bias.
 */
int shlib_work(int n);

int shlib_work(int n)
{
	return n * 2 + 1;
}
