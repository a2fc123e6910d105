/* SPDX-License-Identifier: MIT */
/*
 * env.c - how librec reads its environment: every REC_* variable through
 * rec__getenv(), secure_getenv(), so that a setuid or setgid program reads
 * none of it (rec(3), OUTPUTS AND PRIVILEGES). A leaf: config.c and
 * flight.c both read through it, and neither calls the other back
 * (scripts/librec-calls.sh: no call cycle among librec's files).
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <stdlib.h>
#include <sys/auxv.h>

bool rec__secure(void)
{
	return getauxval(AT_SECURE) != 0;
}

const char *rec__getenv(const char *name)
{
	return secure_getenv(name);
}
