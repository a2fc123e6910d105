/* SPDX-License-Identifier: MIT */
/*
 * env.c - how librec reads its environment: every REC_* variable of
 * config.c's table through rec__getenv(), secure_getenv(), so that a
 * setuid or setgid program reads none of it (rec(3), OUTPUTS AND
 * PRIVILEGES). A leaf: only config.c calls it.
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
