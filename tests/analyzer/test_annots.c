/* SPDX-License-Identifier: MIT */
/*
 * test_annots.c - annotations (rec(3), Annotations) through tracetool: a trace from
 * tracegen with values, instants, a message, arguments (one set twice, one
 * outside any scope) and flows across two threads (one left unfinished),
 * with every expected figure computed by hand: chrome's events, summary
 * --arg, values and flows in csv and json, the filters, several files.
 */
#include <stdbool.h>
#include <unistd.h>

#include "ttest.h"

static char trace[256], trace2[256];

/* Names: tracks 1 queue, 2 load; key 3 bytes; flow 4 request; instant 5 tick. */
static void annot(struct tg_trace *t, uint32_t serial, uint32_t kind, uint32_t name,
		  uint64_t ticks, int64_t i, double d, uint64_t id, const char *text)
{
	struct recfmt_annot a = { .kind = kind, .name_id = name, .ticks = ticks, .i64 = i,
				  .f64 = d, .id = id, .text = text,
				  .text_bytes = text ? (uint32_t)strlen(text) : 0 };

	cr_assert_eq(tg_annot(t, serial, &a), 0);
}

/*
 * Thread 1 "main" (tid 100), thread 2 "worker" (tid 101); sites 1 handle,
 * 2 work. Ticks are ns; time zero is 1000; END at 7300.
 *   main:   handle [2000, 3000): queue=3 @2100, bytes=100 @2150, bytes=150
 *           @2160 (set twice: 150 wins), request#7 begins @2200;
 *           handle [4000, 5000): bytes=50 @4100, request#8 begins @4200,
 *           queue=5 @4300; then queue=1 @6000, bytes=999 @6100 (no scope),
 *           tick @6200, message "hello" @6300.
 *   worker: work [2500, 2900): request#7 ends @2800 (600 ns);
 *           work [4500, 5600): request#8 steps @4600, ends @5500 (1300 ns);
 *           work [7000, 7200): request#9 begins @7100 (unfinished);
 *           load=0.5 @7300.
 */
static void write_annotated(const char *path, uint64_t shift)
{
	struct tg_trace *t = new_trace(path);

	tg_site(t, 1, "handle");
	tg_site(t, 2, "work");
	tg_thread(t, 1, 100, "main");
	tg_thread(t, 2, 101, "worker");
	tg_annot_name(t, 1, RECFMT_NAME_TRACK, "queue");
	tg_annot_name(t, 2, RECFMT_NAME_TRACK, "load");
	tg_annot_name(t, 3, RECFMT_NAME_KEY, "bytes");
	tg_annot_name(t, 4, RECFMT_NAME_FLOW, "request");
	tg_annot_name(t, 5, RECFMT_NAME_INSTANT, "tick");
	tg_enter(t, 1, 1, 2000 + shift);
	annot(t, 1, RECFMT_ANNOT_VALUE_I64, 1, 2100 + shift, 3, 0, 0, NULL);
	annot(t, 1, RECFMT_ANNOT_ARG, 3, 2150 + shift, 100, 0, 0, NULL);
	annot(t, 1, RECFMT_ANNOT_ARG, 3, 2160 + shift, 150, 0, 0, NULL);
	annot(t, 1, RECFMT_ANNOT_FLOW_BEGIN, 4, 2200 + shift, 0, 0, 7, NULL);
	tg_exit(t, 1, 1, 3000 + shift);
	tg_enter(t, 2, 2, 2500 + shift);
	annot(t, 2, RECFMT_ANNOT_FLOW_END, 4, 2800 + shift, 0, 0, 7, NULL);
	tg_exit(t, 2, 2, 2900 + shift);
	/* A block boundary on thread 1: the next annotations are in a
	 * stand-alone record or a later block. */
	cr_assert_eq(tg_flush(t), 0);
	tg_enter(t, 1, 1, 4000 + shift);
	annot(t, 1, RECFMT_ANNOT_ARG, 3, 4100 + shift, 50, 0, 0, NULL);
	annot(t, 1, RECFMT_ANNOT_FLOW_BEGIN, 4, 4200 + shift, 0, 0, 8, NULL);
	annot(t, 1, RECFMT_ANNOT_VALUE_I64, 1, 4300 + shift, 5, 0, 0, NULL);
	tg_exit(t, 1, 1, 5000 + shift);
	tg_enter(t, 2, 2, 4500 + shift);
	annot(t, 2, RECFMT_ANNOT_FLOW_STEP, 4, 4600 + shift, 0, 0, 8, NULL);
	annot(t, 2, RECFMT_ANNOT_FLOW_END, 4, 5500 + shift, 0, 0, 8, NULL);
	tg_exit(t, 2, 2, 5600 + shift);
	cr_assert_eq(tg_flush(t), 0);
	/* Thread 1 has no events left: a stand-alone ANNOTS record. */
	annot(t, 1, RECFMT_ANNOT_VALUE_I64, 1, 6000 + shift, 1, 0, 0, NULL);
	annot(t, 1, RECFMT_ANNOT_ARG, 3, 6100 + shift, 999, 0, 0, NULL);
	annot(t, 1, RECFMT_ANNOT_INSTANT, 5, 6200 + shift, 0, 0, 0, NULL);
	annot(t, 1, RECFMT_ANNOT_MESSAGE, 0, 6300 + shift, 0, 0, 0, "hello");
	tg_enter(t, 2, 2, 7000 + shift);
	annot(t, 2, RECFMT_ANNOT_FLOW_BEGIN, 4, 7100 + shift, 0, 0, 9, NULL);
	tg_exit(t, 2, 2, 7200 + shift);
	annot(t, 2, RECFMT_ANNOT_VALUE_F64, 2, 7300 + shift, 0, 0.5, 0, NULL);
	cr_assert_eq(tg_finish(t, true), 0);
}

static void setup(void)
{
	snprintf(trace, sizeof(trace), "%s", tu_path(0, "annots.zst"));
	snprintf(trace2, sizeof(trace2), "%s", tu_path(1, "annots2.zst"));
	write_annotated(trace, 0);
}

static void teardown(void)
{
	if (getenv("TEST_KEEP_TRACE")) /* for a look by hand */
		return;
	unlink(trace);
	unlink(trace2);
}

TestSuite(annots, .init = setup, .fini = teardown);

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* The chrome events of activations (an "X", or the "B" of a pair: a pair
 * repeats its args on its "E") whose line holds needle. */
static unsigned count_scopes(const char *json, const char *needle)
{
	unsigned n = 0;

	for (const char *l = json, *nl; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		if (!nl)
			nl = l + strlen(l);
		if ((!strncmp(l, "{\"ph\":\"X\"", 9) || !strncmp(l, "{\"ph\":\"B\"", 9))) {
			const char *hit = strstr(l, needle);

			n += hit && hit < nl;
		}
		if (!*nl)
			break;
	}
	return n;
}

Test(annots, summary_arg_totals_and_means_bound_to_their_activation)
{
	struct tu_result r = tu_run("summary", "--format=csv", "--arg=bytes", "--arg=none", trace,
				    NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(tu_line(r.out, 0), SUMMARY_HEADER ",bytes_total,bytes_mean,none_total,none_mean");
	/* handle: 150 (set twice, the later wins) + 50; work carries none. */
	cr_assert_str_eq(tu_line(r.out, 1), "handle,2,2000,2000,1000,1000,1000,1000,1000,1000,0,"
					    "200,100.00,,", "%s", r.out);
	cr_assert(strncmp(tu_line(r.out, 2), "work,3,", 7) == 0, "%s", r.out);
	cr_assert(strstr(tu_line(r.out, 2), ",0,,,,"), "%s", r.out);
	tu_result_free(&r);

	r = tu_run("summary", "--format=json", "--arg=bytes", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out), "%s", r.out);
	cr_assert(strstr(r.out, "\"args\":{\"bytes\":{\"total\":200,\"mean\":100.00}}"), "%s", r.out);
	cr_assert(strstr(r.out, "\"args\":{\"bytes\":null}"), "%s", r.out);
	tu_result_free(&r);

	/* A window holding only the second handle: 50. */
	r = tu_run("summary", "--format=csv", "--arg=bytes", "--from=2500ns", "--to=4500ns", trace,
		   NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "handle,1,1000,1000,"), "%s", r.out);
	cr_assert(strstr(r.out, ",0,50,50.00\n"), "%s", r.out);
	tu_result_free(&r);

	/* Without --arg, tracetool(1)'s header exactly. */
	r = tu_run("summary", "--format=csv", trace, NULL);
	cr_assert_str_eq(tu_line(r.out, 0), SUMMARY_HEADER);
	tu_result_free(&r);
	r = tu_run("summary", "--arg=bytes", "--interval=1ms", trace, NULL);
	cr_assert_eq(r.status, 2);
	tu_result_free(&r);
}

Test(annots, values_time_weighted)
{
	struct tu_result r = tu_run("values", "--format=csv", trace, NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(tu_line(r.out, 0), "track,samples,min,max,mean,last");
	/* load: one sample at the end of the recording: it held no time. */
	cr_assert_str_eq(tu_line(r.out, 1), "load,1,0.5,0.5,0.5,0.5");
	/* queue: 3 for 2200 ns, 5 for 1700 ns, 1 for 1300 ns (to END at 7300). */
	cr_assert_str_eq(tu_line(r.out, 2), "queue,3,1,5,3.15384615384615,1", "%s", r.out);
	cr_assert_eq(tu_nr_lines(r.out), 3);
	tu_result_free(&r);

	r = tu_run("values", "--format=json", "--function=^queue$", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out), "%s", r.out);
	cr_assert(strstr(r.out, "{\"track\":\"queue\",\"samples\":3,\"min\":1,\"max\":5,"
				"\"mean\":3.15384615384615,\"last\":1}"), "%s", r.out);
	cr_assert(!strstr(r.out, "load"));
	tu_result_free(&r);

	/* [3000, 5000) ns from the start: queue=5 at 3300 holds to 5000. */
	r = tu_run("values", "--format=csv", "--from=3us", "--to=5us", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(tu_line(r.out, 1), "queue,1,5,5,5,5", "%s", r.out);
	tu_result_free(&r);

	/* --thread=worker: only load. */
	r = tu_run("values", "--format=csv", "--thread=worker", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.out), 2, "%s", r.out);
	cr_assert_str_eq(tu_line(r.out, 1), "load,1,0.5,0.5,0.5,0.5");
	tu_result_free(&r);

	r = tu_run("values", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "2 value tracks"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("values", "--by-thread", trace, NULL);
	cr_assert_eq(r.status, 2);
	tu_result_free(&r);
}

Test(annots, flows_latency_across_threads)
{
	struct tu_result r = tu_run("flows", "--format=csv", trace, NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(tu_line(r.out, 0),
			 "flow,count,min_ns,mean_ns,p50_ns,p90_ns,p99_ns,max_ns,unfinished");
	uint64_t c, mn, mean, p50, p90, p99, mx, unf;
	cr_assert_eq(sscanf(tu_line(r.out, 1),
			    "request,%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64
			    ",%" SCNu64 ",%" SCNu64 ",%" SCNu64,
			    &c, &mn, &mean, &p50, &p90, &p99, &mx, &unf), 8, "%s", r.out);
	cr_assert_eq(c, 2);
	cr_assert_eq(mn, 600);
	cr_assert_eq(mean, 950);
	cr_assert(p50 >= 594 && p50 <= 606, "p50 %" PRIu64, p50);
	cr_assert(p90 >= 1287 && p90 <= 1300, "p90 %" PRIu64, p90);
	cr_assert_eq(mx, 1300);
	cr_assert_eq(unf, 1);
	tu_result_free(&r);

	r = tu_run("flows", "--format=json", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out), "%s", r.out);
	cr_assert(strstr(r.out, "\"count\":2,\"min_ns\":600,\"mean_ns\":950,"), "%s", r.out);
	cr_assert(strstr(r.out, "\"unfinished\":1,\"steps\":1,\"orphan_ends\":0}"), "%s", r.out);
	/* bytes=999 was set outside any scope. */
	cr_assert(strstr(r.out, "\"unbound\":1,"), "%s", r.out);
	tu_result_free(&r);

	/* Flows belong to the window by their begin: #8 and #9 start after 3 µs. */
	r = tu_run("flows", "--format=csv", "--from=3us", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(tu_line(r.out, 1), "request,1,1300,1300,1300,1300,1300,1300,1", "%s",
			 r.out);
	tu_result_free(&r);
}

Test(annots, chrome_counters_instants_args_and_flows)
{
	struct tu_result r = tu_run("chrome", trace, NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out), "%s", r.out);
	cr_assert_eq(count(r.out, "\"ph\":\"C\""), 4, "%s", r.out);
	cr_assert(strstr(r.out, "{\"ph\":\"C\",\"name\":\"queue\",\"args\":{\"value\":3},\"pid\":4242,"
				"\"tid\":100,\"ts\":1.100}"), "%s", r.out);
	cr_assert(strstr(r.out, "{\"ph\":\"C\",\"name\":\"load\",\"args\":{\"value\":0.5},"),
		  "%s", r.out);
	cr_assert_eq(count(r.out, "\"ph\":\"i\""), 2, "%s", r.out);
	cr_assert(strstr(r.out, "\"name\":\"tick\",\"pid\":4242,\"tid\":100,\"ts\":5.200}"));
	cr_assert(strstr(r.out, "\"name\":\"hello\",\"cat\":\"message\",\"args\":{\"message\":"
				"\"hello\"}"), "%s", r.out);
	/* Args in the complete event of their scope: 150 (the later), then 50. */
	cr_assert(strstr(r.out, "{\"ph\":\"X\",\"name\":\"handle\",\"pid\":4242,\"tid\":100,"
				"\"ts\":1.000,\"dur\":1.000,\"args\":{\"bytes\":150}}"), "%s", r.out);
	cr_assert(strstr(r.out, "\"ts\":3.000,\"dur\":1.000,\"args\":{\"bytes\":50}}"), "%s",
		  r.out);
	cr_assert(!strstr(r.out, "999"));
	cr_assert_eq(count(r.out, "\"ph\":\"s\""), 3, "%s", r.out);
	cr_assert_eq(count(r.out, "\"ph\":\"t\""), 1, "%s", r.out);
	cr_assert_eq(count(r.out, "\"ph\":\"f\""), 2, "%s", r.out);
	cr_assert(strstr(r.out, "{\"ph\":\"s\",\"cat\":\"flow\",\"id\":\"0x7\",\"name\":\"request\","
				"\"pid\":4242,\"tid\":100,\"ts\":1.200}"), "%s", r.out);
	cr_assert(strstr(r.out, "{\"ph\":\"f\",\"cat\":\"flow\",\"id\":\"0x7\",\"bp\":\"e\","
				"\"name\":\"request\",\"pid\":4242,\"tid\":101,\"ts\":1.800}"),
		  "%s", r.out);
	tu_result_free(&r);

	/* The window: only what lies in [3 µs, 5 µs). */
	r = tu_run("chrome", "--from=3us", "--to=5us", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out), "%s", r.out);
	cr_assert_eq(count(r.out, "\"ph\":\"C\""), 1, "%s", r.out);
	cr_assert_eq(count(r.out, "\"ph\":\"s\""), 1, "%s", r.out);
	cr_assert_eq(count(r.out, "\"ph\":\"t\""), 1, "%s", r.out);
	cr_assert_eq(count(r.out, "\"ph\":\"f\""), 1, "%s", r.out); /* #8 ends at 4.5 µs */
	tu_result_free(&r);
}

Test(annots, several_files_add_up)
{
	struct tu_result r;

	write_annotated(trace2, 100000);
	r = tu_run("flows", "--format=csv", trace, trace2, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strncmp(tu_line(r.out, 1), "request,4,600,950,", 18) == 0, "%s", r.out);
	cr_assert(strstr(tu_line(r.out, 1), ",1300,2"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("values", "--format=csv", trace, trace2, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(tu_line(r.out, 2), "queue,6,1,5,3.15384615384615,1", "%s", r.out);
	tu_result_free(&r);
	r = tu_run("summary", "--format=csv", "--arg=bytes", trace, trace2, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(tu_line(r.out, 1), ",0,400,100.00"), "%s", r.out);
	tu_result_free(&r);
}

Test(annots, info_and_check_read_annotations)
{
	struct tu_result r = tu_run("info", "--format=json", trace, NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out), "%s", r.out);
	/* Nothing dropped: no key (info shows drops only when there are). */
	cr_assert(!strstr(r.out, "annotations_dropped"), "%s", r.out);
	cr_assert(strstr(r.out, "\"events\":10,"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
}

/* perfetto decoded by protoc (perfetto_check.py: an independent decoder). */
Test(annots, perfetto_counters_instants_args_and_flows)
{
	char out[300], cmd[1200], *json = NULL;
	size_t cap = 0;
	struct tu_result r;
	FILE *p;

	if (system("command -v protoc >/dev/null 2>&1") != 0 || !getenv("PERFETTO_CHECK"))
		cr_skip_test("protoc not found");
	snprintf(out, sizeof(out), "%s", tu_path(2, "annots.pftrace"));
	r = tu_run("perfetto", "-o", out, trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' '%s'", getenv("PERFETTO_CHECK"),
		 getenv("PERFETTO_PROTO"), out);
	p = popen(cmd, "r");
	cr_assert(p);
	cr_assert(getline(&json, &cap, p) > 0);
	cr_assert_eq(pclose(p), 0, "%s", json);
	unlink(out);
	/* Two counter tracks: queue 3 + 5 + 1, load 0.5. */
	cr_assert(strstr(json, "\"counter_samples\": 4"), "%s", json);
	cr_assert(strstr(json, "\"counter_sums\": {\"load\": 0.5, \"queue\": 9}") ||
		  strstr(json, "\"counter_sums\": {\"queue\": 9, \"load\": 0.5}"), "%s", json);
	/* Args on their slices' ENDs: 150 (the later of two), 50. */
	cr_assert(strstr(json, "\"args\": [[\"bytes\", 150], [\"bytes\", 50], [\"message\", \"hello\"]]"),
		  "%s", json);
	/* request #7: begin, end; #8: begin, step, end; #9: begin only. */
	cr_assert(strstr(json, "\"flows\": [\"begin\", \"begin end\", \"begin step end\"]"), "%s",
		  json);
	cr_assert(strstr(json, "\"marks\": {\"hello\": 1, \"request\": 6, \"tick\": 1}"), "%s", json);
	free(json);
}

static char *slurp(const char *path)
{
	char *buf = tu_read_file(path, NULL);

	cr_assert(buf, "%s", path);
	return buf;
}

Test(annots, export_csv_tables)
{
	char dir[300], path[400], *text;
	struct tu_result r;

	snprintf(dir, sizeof(dir), "%s", tu_path(3, "export"));
	r = tu_run("export", "--format=csv", "-o", dir, trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
	snprintf(path, sizeof(path), "%s/values.csv", dir);
	text = slurp(path);
	cr_assert_str_eq(text, "run_id,thread_id,track,ts_ns,ts_unix_ns,value_i64,value_f64\n"
			       "0,1,queue,1100,1700000000000001100,3,\n"
			       "0,1,queue,3300,1700000000000003300,5,\n"
			       "0,1,queue,5000,1700000000000005000,1,\n"
			       "0,2,load,6300,1700000000000006300,,0.5\n");
	free(text);
	unlink(path);
	snprintf(path, sizeof(path), "%s/flows.csv", dir);
	text = slurp(path);
	/* activation_id: handle #0 and #2 on main, work #1, #3, #4 on worker. */
	cr_assert_str_eq(text, "run_id,thread_id,flow,flow_id,kind,ts_ns,ts_unix_ns,activation_id\n"
			       "0,1,request,7,begin,1200,1700000000000001200,0\n"
			       "0,2,request,7,end,1800,1700000000000001800,1\n"
			       "0,1,request,8,begin,3200,1700000000000003200,2\n"
			       "0,2,request,8,step,3600,1700000000000003600,3\n"
			       "0,2,request,8,end,4500,1700000000000004500,3\n"
			       "0,2,request,9,begin,6100,1700000000000006100,4\n");
	free(text);
	unlink(path);
	snprintf(path, sizeof(path), "%s/args.csv", dir);
	text = slurp(path);
	cr_assert_str_eq(text, "run_id,activation_id,key,value\n0,0,bytes,150\n0,2,bytes,50\n");
	free(text);
	unlink(path);
	snprintf(path, sizeof(path), "%s/instants.csv", dir);
	text = slurp(path);
	cr_assert_str_eq(text, "run_id,thread_id,name,message,ts_ns,ts_unix_ns,activation_id\n"
			       "0,1,tick,false,5200,1700000000000005200,\n"
			       "0,1,hello,true,5300,1700000000000005300,\n");
	free(text);
	unlink(path);
	for (const char *const *n = (const char *const[]){ "runs", "threads", "scopes",
							    "activations", NULL };
	     *n; n++) {
		snprintf(path, sizeof(path), "%s/%s.csv", dir, *n);
		unlink(path);
	}
	rmdir(dir);
}

/* A recorded program (prog_annots.c): the same figures end to end. */
Test(annots, recorded_program)
{
	char out[300], cmd[800];
	struct tu_result r;

	cr_assert(getenv("PROG_ANNOTS"));
	snprintf(out, sizeof(out), "%s", tu_path(4, "prog.zst"));
	snprintf(cmd, sizeof(cmd), "REC_OUTPUT='%s' '%s'", out, getenv("PROG_ANNOTS"));
	cr_assert_eq(system(cmd), 0);

	r = tu_run("summary", "--format=csv", "--arg=bytes", out, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strncmp(tu_line(r.out, 1), "handle,100,", 11) == 0 ||
		  strncmp(tu_line(r.out, 2), "handle,100,", 11) == 0, "%s", r.out);
	cr_assert(strstr(r.out, ",0,4950,49.50\n"), "%s", r.out);
	cr_assert(strstr(r.out, ",0,,\n"), "%s", r.out); /* work carries no bytes */
	tu_result_free(&r);

	r = tu_run("values", "--format=csv", out, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(tu_line(r.out, 1), "load,1,0.5,0.5,0.5,0.5", "%s", r.out);
	cr_assert(strncmp(tu_line(r.out, 2), "queue,100,0,9,", 14) == 0, "%s", r.out);
	{
		const char *q = tu_line(r.out, 2);
		size_t n = strlen(q);

		cr_assert(n > 2 && strcmp(q + n - 2, ",9") == 0, "%s", r.out); /* last */
	}
	tu_result_free(&r);

	r = tu_run("flows", "--format=json", out, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "{\"flow\":\"request\",\"count\":90,"), "%s", r.out);
	cr_assert(strstr(r.out, "\"unfinished\":10,\"steps\":0,\"orphan_ends\":0}"), "%s", r.out);
	cr_assert(strstr(r.out, "\"unbound\":0,"), "%s", r.out);
	tu_result_free(&r);

	r = tu_run("chrome", out, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out));
	cr_assert_eq(count(r.out, "\"ph\":\"C\""), 101);
	cr_assert_eq(count(r.out, "\"ph\":\"i\""), 5);
	cr_assert_eq(count(r.out, "\"ph\":\"s\""), 100);
	cr_assert_eq(count(r.out, "\"ph\":\"f\""), 90);
	cr_assert_eq(count_scopes(r.out, "\"args\":{\"bytes\":"), 100);
	cr_assert(strstr(r.out, "\"args\":{\"bytes\":99}}"));
	/* The first value, 7, was replaced each time: only handle #7 shows it. */
	cr_assert_eq(count_scopes(r.out, "\"args\":{\"bytes\":7}}"), 1);
	tu_result_free(&r);
	unlink(out);
}

/* A thread with counters: its ANNOTS records follow the COUNTERS records
 * of their blocks (FORMAT.md §3.18); summary pairs the block with both. */
Test(annots, counters_and_args_on_one_thread)
{
	static const char *const ctr[1] = { "instructions" };
	static const uint32_t flags[1] = { RECFMT_COUNTER_RECORDED };
	struct tg_trace *t = new_trace(trace2);
	struct tu_result r;
	uint64_t v = 0, now = 2000;

	tg_site(t, 1, "handle");
	tg_thread(t, 1, 100, "main");
	tg_annot_name(t, 3, RECFMT_NAME_KEY, "bytes");
	cr_assert_eq(tg_counter_set(t, 1, 1, ctr, flags), 0);
	for (int64_t i = 1; i <= 10; i++) {
		tg_enter_ctr(t, 1, 1, now += 100, &v);
		annot(t, 1, RECFMT_ANNOT_ARG, 3, now + 10, i, 0, 0, NULL);
		v += 1000;
		tg_exit_ctr(t, 1, 1, now += 100, &v);
	}
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("summary", "--format=csv", "--arg=bytes", trace2, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(tu_line(r.out, 0), SUMMARY_HEADER ",bytes_total,bytes_mean,"
					   "instructions_total,instructions_mean", "%s", r.out);
	cr_assert_str_eq(tu_line(r.out, 1), "handle,10,1000,1000,100,100,100,100,100,100,0,"
					    "55,5.50,10000,1000.00", "%s", r.out);
	tu_result_free(&r);
}

/*
 * Two threads on one track and one flow, every event of thread 1 in the file
 * before any of thread 2 (each thread is one EVENTS block): values and flows
 * must put the samples and flow events back in time order across threads
 * (annots.c's reorder queue). Iteration k (n of them) at 1000 + 20 k:
 * thread 1 "a" records q = k at +1 and begins request#k at +2; thread 2 "b",
 * 10 ns later, records q = -k at +11 and ends request#k at +13 (latency 11),
 * except for the last k, left unfinished.
 */
static void write_two_threads(const char *path, uint32_t n)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000,
				 .pid = 4242, .start_real_ns = 1700000000000000000ull,
				 .block_events = 4 * n, .frame_bytes = 256u << 20 };
	struct tg_trace *t = tg_create(path, &cfg);

	cr_assert(t);
	tg_site(t, 1, "step");
	tg_thread(t, 1, 100, "a");
	tg_thread(t, 2, 101, "b");
	tg_annot_name(t, 1, RECFMT_NAME_TRACK, "q");
	tg_annot_name(t, 4, RECFMT_NAME_FLOW, "request");
	for (uint32_t k = 0; k < n; k++) {
		const uint64_t t0 = 1000 + 20 * (uint64_t)k;

		tg_enter(t, 1, 1, t0);
		annot(t, 1, RECFMT_ANNOT_VALUE_I64, 1, t0 + 1, k, 0, 0, NULL);
		annot(t, 1, RECFMT_ANNOT_FLOW_BEGIN, 4, t0 + 2, 0, 0, k, NULL);
		tg_exit(t, 1, 1, t0 + 5);
		tg_enter(t, 2, 1, t0 + 10);
		annot(t, 2, RECFMT_ANNOT_VALUE_I64, 1, t0 + 11, -(int64_t)k, 0, 0, NULL);
		if (k + 1 < n)
			annot(t, 2, RECFMT_ANNOT_FLOW_END, 4, t0 + 13, 0, 0, k, NULL);
		tg_exit(t, 2, 1, t0 + 15);
	}
	cr_assert_eq(tg_finish(t, true), 0);
}

/* The mean of write_two_threads()'s q: each sample holds 10 ns, the last
 * one (-(n-1) at 1000 + 20 (n-1) + 11) until the last exit, 4 ns. */
static void two_threads_mean(uint32_t n, char *buf, size_t bytes)
{
	long double w = 0;
	uint64_t d = 0;

	for (uint32_t k = 0; k < n; k++) {
		w += (long double)k * 10;
		w += (long double)-(int64_t)k * (k + 1 < n ? 10 : 4);
		d += k + 1 < n ? 20 : 14;
	}
	snprintf(buf, bytes, "%.15g", (double)(w / d));
}

Test(annots, values_and_flows_in_time_order_across_threads)
{
	char want[128], mean[64];
	struct tu_result r;

	write_two_threads(trace2, 1000);
	two_threads_mean(1000, mean, sizeof(mean));
	snprintf(want, sizeof(want), "q,2000,-999,999,%s,-999", mean);
	r = tu_run("values", "--format=csv", trace2, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(tu_line(r.out, 1), want, "%s", r.out);
	cr_assert_str_eq(r.err, "");
	tu_result_free(&r);

	r = tu_run("flows", "--format=csv", trace2, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(tu_line(r.out, 1), "request,999,11,11,11,11,11,11,1", "%s", r.out);
	cr_assert_str_eq(r.err, "");
	tu_result_free(&r);
}

/*
 * 70 000 samples of thread 2 come after 70 000 later ones of thread 1, more
 * than the 65 536 annotations values can reorder: counts, min, max and last
 * stay exact, the mean is approximate and a warning says so; flows warn too.
 */
Test(annots, values_warn_when_out_of_order_beyond_the_queue)
{
	struct tu_result r;

	write_two_threads(trace2, 70000);
	r = tu_run("values", "--format=csv", trace2, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strncmp(tu_line(r.out, 1), "q,140000,-69999,69999,", 22) == 0, "%s", r.out);
	{
		const char *l = tu_line(r.out, 1);
		size_t n = strlen(l);

		cr_assert(n > 7 && strcmp(l + n - 7, ",-69999") == 0, "%s", r.out); /* last */
	}
	cr_assert(strstr(r.err, "value samples came more than 65536 annotations out of time "
				"order: the mean of their tracks is approximate"), "%s", r.err);
	tu_result_free(&r);

	r = tu_run("flows", "--format=json", trace2, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "flow events came more than 65536 annotations out of time order"),
		  "%s", r.err);
	tu_result_free(&r);
}
