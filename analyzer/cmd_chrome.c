/* SPDX-License-Identifier: MIT */
/*
 * cmd_chrome.c - `tracetool chrome TRACE [-o OUT]`: the Chrome Trace Event
 * Format, object form, loadable by Perfetto UI, chrome://tracing and
 * speedscope. One complete ("X") event per timed activation, written when it
 * closes (so memory stays bounded and events are not in global time order,
 * which the format allows), "M" events naming the process and threads, and
 * the drops, errors and damage in "otherData" plus one instant event per
 * thread that dropped scopes. ts and dur are microseconds with three decimals
 * (nanosecond precision). A metadata pre-pass gives the final clock and
 * thread names before the first event is written.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "emit.h"
#include "options.h"
#include "progress.h"
#include "report.h"
#include "symbols.h"

static error_t parse_chrome(int key, char *arg, struct argp_state *state)
{
	struct tt_options *o = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = o;
		break;
	case 'o':
		o->output = arg;
		break;
	default:
		return tt_options_parse_trace(key, arg, state);
	}
	return 0;
}

static const struct argp_option chrome_options[] = {
	{ "output", 'o', "OUT", 0, "Write to OUT instead of standard output", 0 },
	{ 0 },
};

static const struct argp_child chrome_children[] = {
	{ &tt_filter_argp, 0, 0, 0 },
	{ 0 },
};

static const struct argp chrome_argp = {
	chrome_options, parse_chrome, "TRACE",
	"Convert a trace to Chrome Trace Event Format JSON (open it in "
	"https://ui.perfetto.dev, chrome://tracing or https://speedscope.app).\v"
	"Each timed activation is one complete event; activations that could not be "
	"timed (errors) are left out and counted in otherData. chrome://tracing "
	"struggles beyond about a million events: narrow with --from/--to, --thread "
	"or --function.",
	chrome_children, 0, 0,
};

struct chrome {
	struct tt_out out;
	const struct tt_options *o;
	struct tt_report *rep;
	struct tt_trace *meta;
	uint32_t pid;
	char **quoted; /* JSON-quoted names, by name index */
	uint32_t nr_quoted;
	bool *selected; /* --function, by name index */
	uint64_t nr_events;
	bool first;
};

/* Writes a signed ns value as microseconds with 3 decimals: "-12.345". */
static size_t fmt_us(char *p, int64_t ns)
{
	size_t n = 0;
	uint64_t v;

	if (ns < 0) {
		p[n++] = '-';
		v = (uint64_t)0 - (uint64_t)ns;
	} else {
		v = (uint64_t)ns;
	}
	n += tt_emit_u64(p + n, v / 1000);
	p[n++] = '.';
	v %= 1000;
	p[n++] = (char)('0' + v / 100);
	p[n++] = (char)('0' + v / 10 % 10);
	p[n++] = (char)('0' + v % 10);
	return n;
}

/* Chrome tids: the OS tid, unless an earlier thread (serial) already has it:
 * then the serial, or the next free number above it. */
static void assign_tids(struct tt_trace *meta)
{
	for (uint32_t i = 0; i < meta->nr_threads; i++) {
		struct tt_thread *th = &meta->threads[i];
		uint64_t id = th->defined ? th->os_tid : th->serial;
		bool clash;

		do {
			clash = false;
			for (uint32_t k = 0; k < i && !clash; k++)
				clash = meta->threads[k].out_id == id;
			if (clash)
				id = id == th->os_tid ? th->serial : id + 1;
		} while (clash);
		th->out_id = id;
		th->has_out_id = true;
	}
}

static uint64_t tid_of(struct chrome *ch, const struct tt_thread *th)
{
	const struct tt_thread *m = tt_trace_find_thread(ch->meta, th->serial);

	return m ? m->out_id : th->serial;
}

static const char *quoted(struct chrome *ch, uint32_t name)
{
	struct tt_trace *tr = &ch->rep->tr;

	if (name >= ch->nr_quoted) {
		uint32_t n = tr->nr_names + 64;

		ch->quoted = realloc(ch->quoted, n * sizeof(*ch->quoted));
		ch->selected = realloc(ch->selected, n * sizeof(*ch->selected));
		if (!ch->quoted || !ch->selected)
			abort();
		memset(ch->quoted + ch->nr_quoted, 0, (n - ch->nr_quoted) * sizeof(*ch->quoted));
		ch->nr_quoted = n;
	}
	if (!ch->quoted[name]) {
		ch->quoted[name] = tt_emit_json_quote(tr->names[name]);
		if (!ch->quoted[name])
			abort();
		ch->selected[name] = tt_options_function_selected(ch->o, tr->names[name]);
	}
	return ch->selected[name] ? ch->quoted[name] : NULL;
}

static void begin_event(struct chrome *ch)
{
	tt_out_str(&ch->out, ch->first ? "\n" : ",\n");
	ch->first = false;
}

static void on_close(void *ctx, const struct tt_thread *th, uint32_t name, uint64_t enter_ticks,
		     uint64_t dur_ticks)
{
	struct chrome *ch = ctx;
	struct tt_thread *tth = (struct tt_thread *)th;
	const char *q = quoted(ch, name);
	const struct tt_clock *c = &ch->rep->clock;
	size_t qlen;
	char *p;

	if (!q)
		return;
	if (!tth->has_out_id) {
		tth->out_id = tid_of(ch, th);
		tth->has_out_id = true;
	}
	qlen = strlen(q);
	begin_event(ch);
	if (qlen > 4096) {
		tt_out_str(&ch->out, "{\"ph\":\"X\",\"name\":");
		tt_out_write(&ch->out, q, qlen);
		qlen = 0;
		p = tt_out_reserve(&ch->out, 160);
		p += sprintf(p, ",\"pid\":");
	} else {
		p = tt_out_reserve(&ch->out, 160 + qlen);
		memcpy(p, "{\"ph\":\"X\",\"name\":", 17);
		p += 17;
		memcpy(p, q, qlen);
		p += qlen;
		memcpy(p, ",\"pid\":", 7);
		p += 7;
	}
	p += tt_emit_u64(p, ch->pid);
	memcpy(p, ",\"tid\":", 7);
	p += 7;
	p += tt_emit_u64(p, tth->out_id);
	memcpy(p, ",\"ts\":", 6);
	p += 6;
	p += fmt_us(p, tt_clock_rel_ns(c, enter_ticks));
	memcpy(p, ",\"dur\":", 7);
	p += 7;
	p += fmt_us(p, (int64_t)tt_clock_ns(c, dur_ticks));
	*p++ = '}';
	ch->out.len = (size_t)(p - ch->out.buf);
	ch->nr_events++;
}

static void metadata(struct chrome *ch)
{
	char buf[256];
	char *q;

	/* The program's file name when the trace has it (MODULE, 1.1), as
	 * the viewers show processes: "name", with the pid beside it. */
	const char *prog = tt_symbols_program(ch->meta->syms);
	const char *base = prog ? strrchr(prog, '/') : NULL;

	if (prog) {
		q = tt_emit_json_quote(base ? base + 1 : prog);
		if (!q)
			abort();
	} else {
		snprintf(buf, sizeof(buf), "\"pid %" PRIu32 "\"", ch->pid);
		q = strdup(buf);
		if (!q)
			abort();
	}
	begin_event(ch);
	snprintf(buf, sizeof(buf),
		 "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu32
		 ",\"tid\":0,\"args\":{\"name\":",
		 ch->pid);
	tt_out_str(&ch->out, buf);
	tt_out_str(&ch->out, q);
	tt_out_str(&ch->out, "}}");
	free(q);
	for (uint32_t i = 0; i < ch->meta->nr_threads; i++) {
		const struct tt_thread *th = &ch->meta->threads[i];
		char label[4200];

		if (!tt_options_thread_selected(ch->o, th))
			continue;
		tt_thread_label(th, label, sizeof(label));
		q = tt_emit_json_quote(label);
		if (!q)
			abort();
		begin_event(ch);
		snprintf(buf, sizeof(buf),
			 "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu32
			 ",\"tid\":%" PRIu64 ",\"args\":{\"name\":",
			 ch->pid, th->out_id);
		tt_out_str(&ch->out, buf);
		tt_out_str(&ch->out, q);
		tt_out_str(&ch->out, "}}");
		free(q);
		begin_event(ch);
		snprintf(buf, sizeof(buf),
			 "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%" PRIu32
			 ",\"tid\":%" PRIu64 ",\"args\":{\"sort_index\":%" PRIu32 "}}",
			 ch->pid, th->out_id, i);
		tt_out_str(&ch->out, buf);
	}
}

static void trailer(struct chrome *ch)
{
	struct tt_report *rep = ch->rep;
	uint64_t errors = 0, dropped = 0;
	char buf[512], at[32];
	char *q;

	for (size_t i = 0; i < rep->nr_rows; i++)
		errors += rep->rows[i].errors;
	fmt_us(at, tt_clock_rel_ns(&rep->clock, rep->meta.max_ticks))[at] = '\0';
	for (uint32_t i = 0; i < ch->meta->nr_threads; i++) {
		const struct tt_thread *th = &ch->meta->threads[i];

		if (!th->nr_dropped || !tt_options_thread_selected(ch->o, th))
			continue;
		dropped += th->nr_dropped;
		begin_event(ch);
		snprintf(buf, sizeof(buf),
			 "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"%" PRIu64
			 " scopes dropped\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64
			 ",\"ts\":%s,\"args\":{\"dropped\":%" PRIu64 "}}",
			 th->nr_dropped, ch->pid, th->out_id, at, th->nr_dropped);
		tt_out_str(&ch->out, buf);
	}
	snprintf(buf, sizeof(buf),
		 "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"tracetool (rec) "
		 TT_VERSION "\",\"events\":\"%" PRIu64 "\",\"dropped_scopes\":\"%" PRIu64
		 "\",\"errors\":\"%" PRIu64 "\",\"truncated\":\"%s\",\"problems\":",
		 ch->nr_events, dropped, errors, rep->tr.truncated ? "true" : "false");
	tt_out_str(&ch->out, buf);
	q = tt_emit_json_quote(rep->problems);
	if (!q)
		abort();
	tt_out_str(&ch->out, q);
	free(q);
	tt_out_str(&ch->out, "}}\n");
}

int tt_cmd_chrome(int argc, char **argv)
{
	struct tt_options o = TT_OPTIONS_INIT;
	struct tt_report rep;
	struct tt_trace meta;
	struct chrome ch;
	char msg[512];
	int rc = 0, fd = STDOUT_FILENO;
	bool have_rep = false;

	argp_parse(&chrome_argp, argc, argv, 0, NULL, &o);
	memset(&ch, 0, sizeof(ch));
	ch.o = &o;
	ch.first = true;
	/* The metadata pass first, so that a bad file leaves no output file. */
	tt_trace_init(&meta, o.trace);
	if (tt_trace_walk(&meta, NULL, NULL, msg, sizeof(msg)) != TT_OK) {
		rc = tt_fail_file(o.trace, msg);
		goto out;
	}
	if (o.output) {
		fd = open(o.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			snprintf(msg, sizeof(msg), "cannot open: %s", strerror(errno));
			rc = tt_fail_file(o.output, msg);
			goto out;
		}
	}
	if (fd == STDOUT_FILENO)
		tt_progress_stdout_streams(); /* JSON goes out while reading */
	tt_out_init(&ch.out, fd);
	assign_tids(&meta);
	ch.meta = &meta;
	ch.pid = meta.hdr.pid;
	ch.rep = &rep;
	tt_trace_clock(&meta, &rep.clock);
	tt_out_str(&ch.out, "{\"traceEvents\":[");
	metadata(&ch);
	/* tt_report_run() clears rep; the clock is set again from its own
	 * pre-pass, which equals meta's. */
	if (tt_report_run(&rep, &o, on_close, &ch, msg, sizeof(msg)) != TT_OK) {
		have_rep = true;
		rc = tt_fail_file(o.trace, msg);
		goto out;
	}
	have_rep = true;
	tt_trace_warn(&rep.tr);
	trailer(&ch);
	tt_out_flush(&ch.out);
	if (ch.out.failed) {
		snprintf(msg, sizeof(msg), "cannot write: %s", strerror(ch.out.err));
		rc = tt_fail_file(o.output ? o.output : "stdout", msg);
	}
out:
	if (fd != STDOUT_FILENO && fd >= 0)
		close(fd);
	for (uint32_t i = 0; i < ch.nr_quoted; i++)
		free(ch.quoted[i]);
	free(ch.quoted);
	free(ch.selected);
	if (have_rep)
		tt_report_fini(&rep);
	tt_trace_fini(&meta);
	tt_options_fini(&o);
	return rc;
}
