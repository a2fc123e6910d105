/* SPDX-License-Identifier: MIT */
/*
 * bench_func.c - the function bench_probe times in whole-program mode: built
 * with -finstrument-functions, so every call goes through librec's
 * __cyg_profile_func_enter/exit hooks (bench/meson.build). Its twin
 * bench_func_bare is the same empty function without the hooks, so that
 * both sides of the subtraction pay the same cross-file call.
 */
void bench_func(void);
void bench_func_bare(void) __attribute__((no_instrument_function));

__attribute__((noinline)) void bench_func(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void bench_func_bare(void)
{
	__asm__ volatile("" ::: "memory");
}
