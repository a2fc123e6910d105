/* SPDX-License-Identifier: MIT */
#ifndef HONEST_HOOK_H
#define HONEST_HOOK_H
void hook_empty(void);
void hook_func_a(void);
void hook_wrapper_a(void);
/* Calls hook_empty(), between(), hook_empty(): a hooked function open across between(). */
void hook_across(void (*between)(void));
#endif
