/* SPDX-License-Identifier: MIT */
/*
 * plainlib.c - a shared library built with -finstrument-functions but NOT
 * linked with librec: its hook calls reference glibc's (empty) hooks, which
 * librectrace.so overrides on x86-64 (librec/probe.c). prog_instr calls
 * plain_work 4 times.
 */
int plain_work(int n);

int plain_work(int n)
{
	return n - 1;
}
