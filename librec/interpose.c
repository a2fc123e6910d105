/* SPDX-License-Identifier: MIT */
/*
 * interpose.c - the definitions librectrace.so's copies stand before
 * (sample.c's pthread_create() and signal functions, exec.c's exec
 * family, crash.c's sigaction()): the next one in the lookup order after
 * librec (libc's, or a sanitizer's interceptor between them), found once
 * by dlvsym() at glibc's version, else by dlsym() at the default. Each
 * caller looks its functions up first in normal context (at load or at
 * start), so that a copy a host calls in a signal handler or in a child
 * after fork() never enters the dynamic linker there: it reads the slot.
 * It owns nothing else; rec(3) and docs/DESIGN.md ("librec's
 * dependencies are its own", "Crash capture") say which functions librec
 * stands before and why.
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <dlfcn.h>
#include <errno.h>

void *rec__next_fn(struct rec__next *n)
{
	/* Acquire pairs with the release below (another thread's first lookup). */
	void *f = __atomic_load_n(&n->fn, __ATOMIC_ACQUIRE);

	if (f)
		return f;
	f = n->version ? dlvsym(RTLD_NEXT, n->name, n->version) : NULL;
	if (!f)
		f = dlsym(RTLD_NEXT, n->name);
	if (!f) {
		errno = ENOSYS;
		return NULL;
	}
	__atomic_store_n(&n->fn, f, __ATOMIC_RELEASE);
	return f;
}
