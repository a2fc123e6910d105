/* SPDX-License-Identifier: MIT */
/*
 * filter.c - the meaning of the selection of filter.h: --thread by name,
 * label or OS tid (tracetool(1), "Filters"), --function as a POSIX ERE on
 * the name part of a scope's key, --from/--to and --max-duration in ticks
 * of a file's clock.
 */
#include "engine/filter.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A --thread value as an OS tid: digits only. Return: 0 or -1. */
static int parse_id(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

bool tt_options_thread_selected(const struct tt_options *o, const struct tt_thread *th)
{
	char label[64];

	if (!o->nr_threads)
		return true;
	tt_thread_label(th, label, sizeof(label));
	for (unsigned i = 0; i < o->nr_threads; i++) {
		uint64_t id;

		if (th->name && strcmp(th->name, o->threads[i]) == 0)
			return true;
		if (strcmp(label, o->threads[i]) == 0)
			return true;
		if (th->defined && parse_id(o->threads[i], &id) == 0 &&
		    id == th->os_tid)
			return true;
	}
	return false;
}

bool tt_options_threads_missing(const struct tt_options *o, const struct tt_trace *tr, char *msg,
				size_t msg_bytes)
{
	struct tt_options one = *o;
	const char *missing = NULL;
	size_t n = 0;
	uint32_t shown = 0;

	for (unsigned i = 0; i < o->nr_threads; i++) {
		uint32_t k = 0;

		one.threads = &o->threads[i];
		one.nr_threads = 1;
		while (k < tr->nr_threads && !tt_options_thread_selected(&one, &tr->threads[k]))
			k++;
		if (k < tr->nr_threads && o->threads_found)
			o->threads_found[i] = true; /* shared by the files' options */
		if (k == tr->nr_threads && !(o->threads_found && o->threads_found[i]) && !missing)
			missing = o->threads[i];
	}
	if (!missing)
		return false;
	if (o->one_of_several)
		n = (size_t)snprintf(msg, msg_bytes,
				     "no thread '%s' (--thread) in any of the %u files; its threads:",
				     missing, o->nr_several);
	else
		n = (size_t)snprintf(msg, msg_bytes, "no thread '%s' (--thread); its threads:",
				     missing);
	/* As many as the line holds, leaving room for "and N more". */
	for (uint32_t k = 0; k < tr->nr_threads && n < msg_bytes; k++) {
		const struct tt_thread *th = &tr->threads[k];
		char label[96], item[160];
		int len;

		tt_thread_label(th, label, sizeof(label));
		if (th->name && th->defined)
			len = snprintf(item, sizeof(item), "%s %s (tid %" PRIu32 ")", k ? "," : "",
				       label, th->os_tid);
		else
			len = snprintf(item, sizeof(item), "%s %s", k ? "," : "", label);
		if (len < 0 || n + (size_t)len + 24 >= msg_bytes)
			break;
		memcpy(msg + n, item, (size_t)len + 1);
		n += (size_t)len;
		shown++;
	}
	if (!tr->nr_threads)
		snprintf(msg + n, msg_bytes - n, " none");
	else if (shown < tr->nr_threads)
		snprintf(msg + n, msg_bytes - n, " and %" PRIu32 " more", tr->nr_threads - shown);
	return true;
}

bool tt_regex_name(const regex_t *re, const char *key)
{
	/* The name only, not the place of its key (events.h, TT_SITE_SEP):
	 * glibc's REG_STARTEND makes the separator the end of the string. */
	const char *sep = strchr(key, TT_SITE_SEP);
	regmatch_t m = { .rm_so = 0, .rm_eo = sep ? sep - key : (regoff_t)strlen(key) };

	return regexec(re, key, 1, &m, REG_STARTEND) == 0;
}

bool tt_options_function_selected(const struct tt_options *o, const char *name)
{
	return !o->has_function || tt_regex_name(&o->function_re, name);
}

bool tt_options_need_prepass(const struct tt_options *o)
{
	return o->nr_threads || o->has_from || o->has_to || o->has_max_duration;
}

uint64_t tt_options_max_dur_ticks(const struct tt_options *o, const struct tt_clock *c)
{
	struct tt_clock d = *c;
	uint64_t lim;

	if (!o->has_max_duration || o->max_duration_ns == UINT64_MAX)
		return UINT64_MAX;
	d.start_ticks = 0; /* a duration, not a time */
	lim = tt_clock_abs_ticks(&d, o->max_duration_ns + 1);
	return lim ? lim - 1 : 0;
}

void tt_options_window(const struct tt_options *o, const struct tt_clock *c, uint64_t *lo,
		       uint64_t *span)
{
	uint64_t hi = UINT64_MAX;

	*lo = 0;
	if (o->has_from)
		*lo = tt_clock_abs_ticks(c, o->from_ns);
	if (o->has_to)
		hi = tt_clock_abs_ticks(c, o->to_ns);
	*span = hi > *lo ? hi - *lo : 0;
}
