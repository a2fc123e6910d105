/* SPDX-License-Identifier: MIT */
/*
 * procmem.h - for the plain (non-Criterion) test programs that check
 * librec's memory: this process's memory figures from /proc/self/status,
 * REC_MEMORY as librec reads it, and numbers from the environment.
 * Header only: those programs also run under ThreadSanitizer, with no
 * library of tests/ linked.
 */
#ifndef TU_PROCMEM_H
#define TU_PROCMEM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* KiB from a "Name:   123 kB" line of /proc/self/status (VmRSS, VmHWM),
 * or -1. */
static inline long tu_status_kib(const char *name)
{
	char line[256];
	size_t len = strlen(name);
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, name, len) == 0 && line[len] == ':')
			v = atol(line + len + 1);
	fclose(f);
	return v;
}

/* The number in environment variable name, or dflt when unset or empty. */
static inline long tu_env_long(const char *name, long dflt)
{
	const char *v = getenv(name);

	return v && *v ? atol(v) : dflt;
}

/* REC_MEMORY as librec reads it (K/M/G suffixes; README "Memory"), in
 * bytes; default 256M. */
static inline long long tu_rec_memory_bytes(void)
{
	const char *v = getenv("REC_MEMORY");
	char *end;
	long long n;

	if (!v || !*v)
		return 256ll << 20;
	n = strtoll(v, &end, 10);
	switch (*end) {
	case 'K': case 'k': return n << 10;
	case 'M': case 'm': return n << 20;
	case 'G': case 'g': return n << 30;
	default: return n;
	}
}

#endif /* TU_PROCMEM_H */
