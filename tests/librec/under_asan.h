/* SPDX-License-Identifier: MIT */
/*
 * under_asan.h - for librec's Criterion tests: UNDER_ASAN is defined when
 * the test is built with AddressSanitizer (gcc's or clang's spelling), and
 * skip_fork_under_asan() skips a test that forks a threaded process.
 *
 * ASan's allocator (gcc 12, clang 14) is not fork-safe: a child forked while
 * another thread is inside malloc deadlocks on its lock (glibc's malloc is
 * fork-safe). Tests that fork while librec's writer runs skip under ASan.
 */
#ifndef UNDER_ASAN_H
#define UNDER_ASAN_H

#include <criterion/criterion.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static inline void skip_fork_under_asan(void)
{
#ifdef UNDER_ASAN
	cr_skip_test("fork while threads allocate deadlocks in ASan's allocator");
#endif
}

#endif
