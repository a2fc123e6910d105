/* SPDX-License-Identifier: MIT */
/*
 * cmd_chrome.c - `tracetool chrome TRACE [-o OUT]`: the Chrome Trace Event
 * Format, object form, loadable by Perfetto UI, chrome://tracing and
 * speedscope. One complete ("X") event per activation, written when it
 * closes (so memory stays bounded and events are not in global time order,
 * which the format allows), or a "B"/"E" pair where an end ties with a
 * neighbour to the nanosecond (write_held()), "M" events naming the process
 * and threads, and the drops, errors and damage in "otherData" plus one
 * instant event per thread that dropped scopes. ts and dur are microseconds
 * with three decimals (nanosecond precision; docs/ANALYZER.md, "chrome
 * output"). The final clock comes
 * from a skim of the file's first and last frames (tt_trace_skim_exact()),
 * else from a metadata pass; the "M" events are written after each file's
 * events, with the threads' final names, so each file is read once in the
 * common case. With stdout a terminal and no -o, the output goes to
 * trace.json. Each walker of the walk (front.h) pairs its share of the
 * threads and writes into its lane of the output (out/lanes.h): the same
 * bytes with any number of walkers (docs/ANALYZER.md, "Parallel timelines").
 */
#include <argp.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "common/emit.h"
#include "common/hmap.h"
#include "common/keyidx.h"
#include "views/labels.h"
#include "views/samples.h"
#include "cmd/options.h"
#include "common/progress.h"
#include "engine/front.h"
#include "engine/index.h"
#include "engine/report.h"
#include "engine/symbols.h"
#include "common/xalloc.h"
#include "out/lanes.h"

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
		return tt_options_parse_traces(key, arg, state);
	}
	return 0;
}

static const struct argp_option chrome_options[] = {
	{ "output", 'o', "OUT", 0,
	  "Write to OUT (- for standard output) instead of standard output, or of trace.json "
	  "when standard output is a terminal", 0 },
	{ 0 },
};

static const struct argp_child chrome_children[] = {
	{ &tt_filter_argp, 0, 0, 0 },
	{ 0 },
};

static const struct argp chrome_argp = {
	chrome_options, parse_chrome, "TRACE...",
	"Convert a trace to Chrome Trace Event Format JSON (open it in "
	"https://ui.perfetto.dev, chrome://tracing or https://speedscope.app).\v"
	"Each activation is one complete event (\"X\": ts and dur in microseconds, "
	"to the nanosecond); one that ends in the very nanosecond where the next scope "
	"of its thread starts or ends is a \"B\"/\"E\" pair instead, so that every "
	"viewer nests it exactly. Activations closed without an exit carry the reason "
	"in args.error. --from/--to keep every scope that overlaps the window, clipped "
	"to it. With standard output a terminal and no -o, the JSON goes to trace.json "
	"(said on standard error). chrome://tracing struggles beyond about a million "
	"events: narrow with --from/--to, --thread or --function.\n\n"
	"Several TRACE files (the processes of a service, a fork's parent and child) "
	"make one timeline: each is a process with its own threads, and times are "
	"aligned on the wall clock, from the earliest recording's start. --from/--to "
	"stay relative to each file's own start.",
	chrome_children, 0, 0,
};

/* An argument of a frame (TRACE_ARG): its JSON-quoted key (owned by the
 * thread's name cache) and value. */
struct chrome_arg {
	const char *qkey;
	int64_t v;
};

/* An annotation's name and its JSON-quoted form, in a thread's cache. */
struct chrome_qname {
	char *name; /* a copy: the engine may free and redefine a name */
	uint32_t name_bytes;
	char *quoted;
};

/* A frame as the consumer keeps it: whether it is shown (written when it
 * closes), from where (its enter, or the window's start), whether its "B"
 * is out already (a child starts in the same nanosecond), and its
 * arguments. */
struct chrome_frame {
	uint32_t name;
	bool written;
	bool tailed; /* written when its thread passed --to (pass_window()) */
	bool began; /* its "B" is written: it closes with an "E" */
	uint64_t enter_ticks;
	int64_t start_ns; /* ts, when written */
	struct chrome_arg *args; /* kept with the stack slot, reused */
	uint32_t nr_args, cap_args;
	struct tt_keyidx idx; /* args by key, past TT_KEYIDX_FROM of them */
};

/*
 * The scope a thread closed last, kept until the thread's next shown event
 * says whether it ends in the nanosecond where that one starts or ends
 * (tied: then it is written as a "B"/"E" pair, exact in every viewer).
 */
struct chrome_held {
	bool has;
	bool tied;  /* it ends where the next event starts or ends */
	bool began; /* its "B" is out: it gets an "E" */
	uint32_t name;
	int64_t start_ns, end_ns;
	const char *mark; /* a static JSON member, or NULL */
	struct chrome_arg *args; /* a copy: the stack slot is reused */
	uint32_t nr_args, cap_args;
};

struct chrome_walker;

/* The start of a thread's complete events of one name, padded with room
 * to copy it PREFIX_CHUNK bytes at a time (write_held()). */
struct chrome_prefix {
	char *s;
	uint32_t len;
};

#define PREFIX_CHUNK 32
/* Names quoted longer than this are written piece by piece. */
#define PREFIX_MAX_NAME 256

/* Per thread: the open frames; those below nr_decided are known to be
 * shown (written), or never will be (not selected, or after the window). */
struct chrome_thread {
	struct chrome_walker *cw; /* the walker that pairs it */
	uint32_t rank;		  /* its place among the file's threads (thread_seen()) */
	uint64_t tid;
	struct chrome_frame *stack;
	uint32_t sp, cap, nr_decided;
	struct chrome_held held;
	/* Its first event at or after --to came (pass_window()): what it
	 * still had to write is in its walker's tail file at [tail_at, +tail_len). */
	bool passed;
	uint64_t tail_at, tail_len;
	/* ,"pid":P,"tid":T,"ts": -- the middle of each of its scope events, written once */
	char head[64];
	uint32_t head_len;
	/* By name index: ",\n{"ph":"X","name":Q,"pid":P,"tid":T,"ts":", the
	 * whole start of its complete events (event_prefix()), NULL until its
	 * first; nr_prefix of them. */
	struct chrome_prefix *prefix;
	uint32_t nr_prefix;
	/* Annotation names quoted once each (messages are not: each is its
	 * own text). */
	struct chrome_qname *qnames;
	uint32_t nr_qnames, cap_qnames;
	struct tt_hmap qname_map; /* hmap.h: qnames by name */
	struct chrome_thread *next;
};

/* A node of the sampled stacks' tree, an entry of the output's
 * "stackFrames": its function (JSON-quoted label), module and parent. */
struct chrome_sframe {
	uint32_t parent; /* its parent's id, 0: a root */
	char *qname, *qmodule;
};

/*
 * What one walker of the file's walk keeps (front.h: a replica pairs the
 * threads of its share): its threads, the names of its replica's table
 * quoted, its own copy of the file's tids (each walker sees every thread
 * start: thread_seen()), and its lane of the output (out/lanes.h), so that
 * the output is the same whatever the number of walkers.
 */
struct chrome_walker {
	struct chrome *ch;
	struct tt_trace *tr;	/* its replica (thread_seen()) */
	struct tt_lane *lane;
	struct tt_out *out;	/* its lane's; its tail file's (pass_window()); the output's
				 * at the file's end */
	bool first;		/* the output's first event (only at the file's end) */
	struct chrome_thread *threads;
	uint64_t *ids;		/* the file's chrome tids taken */
	uint32_t nr_ids, cap_ids;
	struct tt_hmap id_map;	/* hmap.h: ids by value */
	uint32_t nr_reserved;	/* threads of tr below it: tids given */
	uint32_t nr_seen, *rank; /* rank by thread index, for nr_seen of them */
	uint32_t nr_ranked;	 /* threads seen so far */
	char **quoted;		/* JSON-quoted names, by name index of tr */
	size_t *quoted_len;	/* their strlen(), by name index */
	bool *selected;		/* --function, by name index */
	uint32_t nr_quoted;
	struct tt_inc_labels labels; /* the names' labels (labels.h) */
	uint64_t nr_events;
	uint64_t nr_annots; /* annotation events written */
	uint64_t nr_marked; /* scopes written with an error (args.error) */
	FILE *tail;	    /* its threads' tails (pass_window()), NULL until one */
	struct tt_out *tail_out;
	uint64_t tail_bytes;
};

struct chrome {
	/* Per file (several TRACE files: reset by next_file()). */
	int64_t offset_ns;	      /* the file's start on the shared timeline */
	const int64_t *offsets;	      /* several files: each one's offset_ns and pid */
	const uint32_t *pids;
	bool has_pid;		      /* pid given (several files), else the file's */
	bool opened;		      /* the output is open, its head written */
	uint64_t all_events, all_errors, all_dropped; /* of the files done */
	bool any_truncated;
	char all_problems[768];
	struct tt_out out;
	struct tt_clock clock;	      /* the file's final clock (meta pass) */
	struct tt_clock_fx fx;	      /* the same, for the scopes' two times each */
	uint64_t lo_ticks, hi_ticks;  /* --from/--to; hi UINT64_MAX: none */
	bool started;	  /* start() ran: the output is open, its head written */
	struct chrome_walker walkers[TT_WALK_MAX_REPLICAS];
	unsigned nr_walkers, max_walkers; /* the file's; the most of any file */
	struct tt_lanes lanes;	/* the walkers' output (lanes.h) */
	struct tt_trace *metas;	/* each file's metadata (read_metas()) */
	int fd;		  /* the output */
	int open_rc;	  /* -o could not be opened (-1), or is the input (-2):
			   * then nothing is written */
	char open_msg[512];
	const struct tt_options *o;
	struct tt_report *rep;
	uint32_t pid;
	uint64_t nr_events; /* of the file, when its walk is done */
	uint64_t spilled;   /* bytes the lanes put in temporary files, all files */
	bool stats;	    /* TRACETOOL_CHROME_STATS */
	uint64_t walker_cpu_ns[TT_WALK_MAX_REPLICAS]; /* each walker's share, all files */
	uint64_t nr_marked;
	bool first;
	/* The stack frames of every file's samples: "sf" id - 1, by (parent,
	 * name, module) in sframe_map (hmap.h). */
	struct chrome_sframe *sframes;
	uint32_t nr_sframes, cap_sframes;
	struct tt_hmap sframe_map;
	uint64_t nr_samples; /* stack samples written, of every file */
};

/* Decimal digits of v (1 for 0): the bit length's estimate of log10,
 * corrected by one comparison. */
static inline unsigned dec_digits(uint64_t v)
{
	static const uint64_t p10[20] = {
		0, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
		10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
		100000000000000ull, 1000000000000000ull, 10000000000000000ull,
		100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
	};
	unsigned t = ((unsigned)(64 - __builtin_clzll(v | 1)) * 1233) >> 12;

	return t + (v >= p10[t]);
}

/* Writes a signed ns value as microseconds with 3 decimals: "-12.345", its
 * digits two at a time from the right, in place. At most 25 bytes. The
 * general case of fmt_us(). */
static __attribute__((noinline)) size_t fmt_us_any(char *p, int64_t ns)
{
	static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
				       "25262728293031323334353637383940414243444546474849"
				       "50515253545556575859606162636465666768697071727374"
				       "75767778798081828384858687888990919293949596979899";
	const uint64_t v = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	uint64_t us = v / 1000;
	const unsigned frac = (unsigned)(v - us * 1000);
	const size_t n = (ns < 0) + dec_digits(us) + 4;
	char *q = p + n;
	unsigned d;

	if (ns < 0)
		p[0] = '-';
	*--q = (char)('0' + frac % 10);
	d = frac / 10 * 2;
	*--q = pairs[d + 1];
	*--q = pairs[d];
	*--q = '.';
	while (us >= 100) {
		d = (unsigned)(us % 100) * 2;
		us /= 100;
		*--q = pairs[d + 1];
		*--q = pairs[d];
	}
	if (us >= 10) {
		*--q = pairs[us * 2 + 1];
		*--q = pairs[us * 2];
	} else {
		*--q = (char)('0' + us);
	}
	return n;
}

/*
 * Each number below 1000 as a 4-byte word to store as is (little-endian
 * x86-64, arm64...; byte order below): DIG3, its three digits with leading
 * zeros ("007"); DIGL, its digits without them, then the count in the last
 * byte ("7", 1). Built by the compiler: read-only, shared by the walkers.
 */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "fmt_us() stores its digit words little-endian"
#endif
#define DIG_C(i, k) ((uint32_t)('0' + (i) / (k) % 10))
#define DIG3(i) (DIG_C(i, 100) | DIG_C(i, 10) << 8 | DIG_C(i, 1) << 16)
#define DIGL(i)                                               \
	((i) >= 100 ? DIG3(i) | 3u << 24                       \
	 : (i) >= 10 ? (DIG_C(i, 10) | DIG_C(i, 1) << 8 | 2u << 24) \
		     : (DIG_C(i, 1) | 1u << 24))
#define DIG_10(F, b) F(b), F(b + 1), F(b + 2), F(b + 3), F(b + 4), F(b + 5), F(b + 6), \
		     F(b + 7), F(b + 8), F(b + 9)
#define DIG_100(F, b) DIG_10(F, b), DIG_10(F, b + 10), DIG_10(F, b + 20), DIG_10(F, b + 30), \
		      DIG_10(F, b + 40), DIG_10(F, b + 50), DIG_10(F, b + 60),                 \
		      DIG_10(F, b + 70), DIG_10(F, b + 80), DIG_10(F, b + 90)
#define DIG_1000(F) DIG_100(F, 0), DIG_100(F, 100), DIG_100(F, 200), DIG_100(F, 300), \
		    DIG_100(F, 400), DIG_100(F, 500), DIG_100(F, 600), DIG_100(F, 700),   \
		    DIG_100(F, 800), DIG_100(F, 900)
static const uint32_t dig3[1000] = { DIG_1000(DIG3) };
static const uint32_t digl[1000] = { DIG_1000(DIGL) };

/*
 * Writes a signed ns value as microseconds with 3 decimals: "-12.345"
 * (chrome writes two of these an activation). At most 25 bytes, none
 * past the ones it counts. From 0 to 1000 s: the
 * integer microseconds in groups of three digits, each group one load
 * from a table and one store (the first without its leading zeros),
 * then ".ddd" the same way: a third of fmt_us_any()'s instructions.
 */
static inline size_t fmt_us(char *p, int64_t ns)
{
	char *const p0 = p;
	const uint64_t v = (uint64_t)ns;
	uint64_t us;
	uint32_t frac, w;

	if (__builtin_expect(v >= 1000000000000ull, 0)) /* negative, or 1000 s or more */
		return fmt_us_any(p, ns);
	us = v / 1000;
	frac = (uint32_t)(v - us * 1000);
	if (us >= 1000) {
		const uint64_t k = us / 1000;
		const uint32_t low = (uint32_t)(us - k * 1000);

		if (k >= 1000) { /* 1 s or more */
			const uint32_t m = (uint32_t)(k / 1000);

			w = digl[m];
			memcpy(p, &w, 4);
			p += w >> 24;
			w = dig3[k - (uint64_t)m * 1000];
			memcpy(p, &w, 4);
			p += 3;
		} else {
			w = digl[k];
			memcpy(p, &w, 4);
			p += w >> 24;
		}
		w = dig3[low];
		memcpy(p, &w, 4);
		p += 3;
	} else {
		w = digl[us];
		memcpy(p, &w, 4);
		p += w >> 24;
	}
	w = '.' | dig3[frac] << 8;
	memcpy(p, &w, 4);
	return (size_t)(p - p0) + 4;
}

/* a + b, saturated: a hostile file's times stay defined. */
static int64_t add_ns(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

/* Above every Linux tid (PID_MAX_LIMIT, 2^22): the base of fallback ids. */
#define CHROME_FALLBACK_TID ((uint64_t)1 << 22)

struct id_key {
	const struct chrome_walker *cw;
	uint64_t id;
};

static bool id_eq(const void *ctx, uint32_t k)
{
	const struct id_key *key = ctx;

	return key->cw->ids[k] == key->id;
}

/* Takes id for a thread of the file if no other thread has it. */
static bool take_id(struct chrome_walker *cw, uint64_t id)
{
	const struct id_key key = { cw, id };
	uint32_t h = tt_hash_u64(id); /* the file's tids: keyed, hmap.h */

	if (tt_hmap_find(&cw->id_map, h, id_eq, &key) != TT_HMAP_NONE)
		return false;
	if (cw->nr_ids == cw->cap_ids) {
		cw->cap_ids = cw->cap_ids ? 2 * cw->cap_ids : 64;
		cw->ids = tt_xrealloc(cw->ids, cw->cap_ids * sizeof(*cw->ids));
	}
	tt_hmap_put(&cw->id_map, h, cw->nr_ids);
	cw->ids[cw->nr_ids++] = id;
	return true;
}

/*
 * A thread's chrome tid, fixed at its first event (or at the file's end for
 * a thread with none), with no knowledge of the threads to come: its OS tid
 * when its THREAD record has been read and no earlier thread has that tid;
 * else 2^22 + its serial, above every Linux tid, counting up while taken (a
 * hostile file may give any tid). O(1) per thread; ends whatever the file
 * says.
 */
static void assign_tid(struct chrome_walker *cw, struct tt_thread *th)
{
	uint64_t id = CHROME_FALLBACK_TID + th->serial;

	if (th->has_out_id)
		return;
	th->has_out_id = true;
	if (th->defined && take_id(cw, th->os_tid)) {
		th->out_id = th->os_tid;
		return;
	}
	while (!take_id(cw, id))
		id++;
	th->out_id = id;
}

/*
 * The tid of thread th of the walker's replica, at its first event: the
 * threads listed before it (first appearance in the file, as the metadata
 * pass orders them) whose THREAD record has been read take their OS tids
 * first, so "earlier" means what it did with a metadata pass. Every walker
 * does it for every thread, in the file's order (thread_seen()), so each
 * has the same tids.
 */
static void tid_at_first_event(struct chrome_walker *cw, struct tt_trace *tr,
			       struct tt_thread *th)
{
	uint32_t idx = (uint32_t)(th - tr->threads);

	for (; cw->nr_reserved < idx; cw->nr_reserved++)
		if (tr->threads[cw->nr_reserved].defined)
			assign_tid(cw, &tr->threads[cw->nr_reserved]);
	assign_tid(cw, th);
}

/* quoted() the first time a name is met: its label quoted, its --function. */
static __attribute__((noinline)) const char *quoted_slow(struct chrome_walker *cw, uint32_t name)
{
	struct tt_trace *tr = cw->tr;

	if (name >= cw->nr_quoted) {
		uint32_t n = tr->nr_names + 64;

		cw->quoted = realloc(cw->quoted, n * sizeof(*cw->quoted));
		cw->quoted_len = realloc(cw->quoted_len, n * sizeof(*cw->quoted_len));
		cw->selected = realloc(cw->selected, n * sizeof(*cw->selected));
		if (!cw->quoted || !cw->quoted_len || !cw->selected)
			tt_oom();
		memset(cw->quoted + cw->nr_quoted, 0, (n - cw->nr_quoted) * sizeof(*cw->quoted));
		cw->nr_quoted = n;
	}
	if (!cw->quoted[name]) {
		cw->quoted[name] = tt_emit_json_quote(
			tt_inc_label(&cw->labels, tr->names, tr->nr_names, name));
		if (!cw->quoted[name])
			tt_oom();
		cw->quoted_len[name] = strlen(cw->quoted[name]);
		cw->selected[name] = tt_options_function_selected(cw->ch->o, tr->names[name]);
	}
	return cw->selected[name] ? cw->quoted[name] : NULL;
}

/* The JSON-quoted label of a name, NULL if --function leaves it out. */
static inline const char *quoted(struct chrome_walker *cw, uint32_t name)
{
	if (__builtin_expect(name < cw->nr_quoted && cw->quoted[name], 1))
		return cw->selected[name] ? cw->quoted[name] : NULL;
	return quoted_slow(cw, name);
}

/*
 * An event's start: ",\n" (the output's first: "\n"). In the lane, at the
 * place in the walk where the event is written (lanes.h): the lanes drop
 * the comma of the file's first event when it is the output's first.
 */
static inline void event_mark(struct chrome_walker *cw)
{
	if (cw->lane && cw->out == &cw->lane->out)
		tt_lane_at(cw->lane, cw->tr->pos);
}

static inline void begin_event(struct chrome_walker *cw)
{
	char *p;

	event_mark(cw);
	p = tt_out_reserve(cw->out, 2);
	if (cw->first) {
		*p++ = '\n';
		cw->first = false;
	} else {
		*p++ = ',';
		*p++ = '\n';
	}
	cw->out->len = (size_t)(p - cw->out->buf);
}

/*
 * Writes the head of a scope event, {"ph":"P","name":Q,"pid":P,"tid":T,"ts":S
 * (the caller closes it).
 */
static void scope_head(struct chrome_walker *cw, struct chrome_thread *ct, char ph,
		       uint32_t name, int64_t ns)
{
	struct tt_out *out = cw->out;
	const char *q = cw->quoted[name];
	size_t qlen = cw->quoted_len[name];
	char *p;

	begin_event(cw);
	if (qlen > 4096) {
		tt_out_str(out, ph == 'X' ? "{\"ph\":\"X\",\"name\":"
				: ph == 'B' ? "{\"ph\":\"B\",\"name\":"
					    : "{\"ph\":\"E\",\"name\":");
		tt_out_write(out, q, qlen);
		p = tt_out_reserve(out, 200);
	} else {
		p = tt_out_reserve(out, 200 + qlen);
		memcpy(p, "{\"ph\":\"X\",\"name\":", 17);
		p[7] = ph;
		p += 17;
		memcpy(p, q, qlen);
		p += qlen;
	}
	memcpy(p, ct->head, ct->head_len);
	p += ct->head_len;
	p += fmt_us(p, ns);
	out->len = (size_t)(p - out->buf);
}

/* Writes ,"args":{MARK,"KEY":V,...} when there is any, and the closing brace. */
static void scope_tail(struct chrome_walker *cw, const char *mark, const struct chrome_arg *args,
		       uint32_t nr_args)
{
	char num[32];

	if (mark || nr_args) {
		tt_out_str(cw->out, ",\"args\":{");
		if (mark)
			tt_out_str(cw->out, mark);
		for (uint32_t i = 0; i < nr_args; i++) {
			if (mark || i)
				tt_out_str(cw->out, ",");
			tt_out_str(cw->out, args[i].qkey);
			snprintf(num, sizeof(num), ":%" PRId64, args[i].v);
			tt_out_str(cw->out, num);
		}
		tt_out_str(cw->out, "}");
	}
	tt_out_str(cw->out, "}");
}

/* event_prefix()'s first time for the name on the thread. */
static __attribute__((noinline)) void prefix_new(struct chrome_thread *ct, uint32_t name)
{
	const struct chrome_walker *cw = ct->cw;
	const size_t qlen = cw->quoted_len[name];
	struct chrome_prefix *e;
	size_t len;

	if (name >= ct->nr_prefix) {
		const uint32_t n = name + 64;

		ct->prefix = tt_xrealloc(ct->prefix, n * sizeof(*ct->prefix));
		memset(ct->prefix + ct->nr_prefix, 0, (n - ct->nr_prefix) * sizeof(*ct->prefix));
		ct->nr_prefix = n;
	}
	e = &ct->prefix[name];
	len = 2 + 17 + qlen + ct->head_len;
	/* Whole chunks, zeroed past len: the copy reads them all. */
	e->s = tt_xcalloc(1, (len + PREFIX_CHUNK - 1) / PREFIX_CHUNK * PREFIX_CHUNK);
	memcpy(e->s, ",\n{\"ph\":\"X\",\"name\":", 19);
	memcpy(e->s + 19, cw->quoted[name], qlen);
	memcpy(e->s + 19 + qlen, ct->head, ct->head_len);
	e->len = (uint32_t)len;
}

/* The start of the thread's complete events of a name (quoted()). */
static inline const struct chrome_prefix *event_prefix(struct chrome_thread *ct, uint32_t name)
{
	if (__builtin_expect(name >= ct->nr_prefix || !ct->prefix[name].s, 0))
		prefix_new(ct, name);
	return &ct->prefix[name];
}

/*
 * write_held() - writes the scope the thread closed last: a complete ("X")
 * event, ts its start's nanoseconds and dur the integer nanoseconds to its
 * end, each converted from ticks once. Viewers add ts + dur in floating
 * point (speedscope after subtracting the thread's first ts), off by far
 * less than a nanosecond, so a scope 1 ns or more inside its parent or
 * before its next sibling stays there; one that ends in the very
 * nanosecond where the next event on its thread starts or ends (tied), or
 * whose "B" went out early (began), is a "B"/"E" pair instead, whose
 * endpoints are the same strings as its neighbours'.
 */
/* The common event in one piece, ,\n{"ph":"X","name":Q,HEAD TS,"dur":D},
 * its start (pre) copied in fixed-size chunks, with no call. */
static inline __attribute__((always_inline)) void write_x(struct chrome_walker *cw,
							  const struct chrome_prefix *pre,
							  int64_t start_ns, int64_t end_ns)
{
	char *p;

	event_mark(cw);
	p = tt_out_reserve(cw->out, 64 + pre->len + PREFIX_CHUNK);
	for (uint32_t k = 0; k < pre->len; k += PREFIX_CHUNK)
		memcpy(p + k, pre->s + k, PREFIX_CHUNK);
	p += pre->len;
	p += fmt_us(p, start_ns);
	memcpy(p, ",\"dur\":", 7);
	p += 7;
	p += fmt_us(p, (int64_t)((uint64_t)end_ns - (uint64_t)start_ns));
	*p++ = '}';
	cw->out->len = (size_t)(p - cw->out->buf);
}

static __attribute__((noinline)) void write_held_any(struct chrome_walker *cw,
						     struct chrome_thread *ct)
{
	struct chrome_held *h = &ct->held;
	char *p;

	if (!h->has)
		return;
	h->has = false;
	if (h->began) { /* its arguments on the "E": viewers merge them */
		scope_head(cw, ct, 'E', h->name, h->end_ns);
		scope_tail(cw, h->mark, h->args, h->nr_args);
		return;
	}
	if (h->tied) { /* the same args on both: speedscope matches them so */
		scope_head(cw, ct, 'B', h->name, h->start_ns);
		scope_tail(cw, h->mark, h->args, h->nr_args);
		scope_head(cw, ct, 'E', h->name, h->end_ns);
		scope_tail(cw, h->mark, h->args, h->nr_args);
		return;
	}
	if (!h->mark && !h->nr_args && !cw->first && cw->quoted_len[h->name] <= PREFIX_MAX_NAME) {
		write_x(cw, event_prefix(ct, h->name), h->start_ns, h->end_ns);
		return;
	}
	scope_head(cw, ct, 'X', h->name, h->start_ns);
	p = tt_out_reserve(cw->out, 40);
	memcpy(p, ",\"dur\":", 7);
	p += 7;
	p += fmt_us(p, (int64_t)((uint64_t)h->end_ns - (uint64_t)h->start_ns));
	cw->out->len = (size_t)(p - cw->out->buf);
	scope_tail(cw, h->mark, h->args, h->nr_args);
}

/*
 * write_held() for the paths of every activation: a plain complete event
 * whose start is cached (event_prefix()) written inline, anything else by
 * write_held_any().
 */
static inline __attribute__((always_inline)) void write_held(struct chrome_walker *cw,
							     struct chrome_thread *ct)
{
	struct chrome_held *h = &ct->held;

	if (!h->has)
		return;
	if (__builtin_expect(!h->began && !h->tied && !h->mark && !h->nr_args && !cw->first &&
				     h->name < ct->nr_prefix && ct->prefix[h->name].s,
			     1)) {
		h->has = false;
		write_x(cw, &ct->prefix[h->name], h->start_ns, h->end_ns);
		return;
	}
	write_held_any(cw, ct);
}

/*
 * A shown scope of the thread closes at end_ns: it is held until the
 * thread's next shown event (write_held()). The one held before is written
 * now; when it ends in the same nanosecond it is this one's last child (or
 * a zero-length neighbour), and both become pairs.
 */
static inline __attribute__((always_inline)) void
hold(struct chrome_walker *cw, struct chrome_thread *ct, const struct chrome_frame *f,
     int64_t start_ns, int64_t end_ns, const char *mark)
{
	struct chrome_held *h = &ct->held;
	bool tied = false;

	if (end_ns < start_ns)
		end_ns = start_ns;
	if (h->has && h->end_ns == end_ns)
		h->tied = tied = true;
	write_held(cw, ct);
	h->has = true;
	h->tied = tied;
	h->began = f->began;
	h->name = f->name;
	h->start_ns = start_ns;
	h->end_ns = end_ns;
	h->mark = mark;
	cw->nr_marked += mark != NULL;
	if (f->nr_args > h->cap_args) {
		h->cap_args = f->nr_args;
		h->args = tt_xrealloc(h->args, h->cap_args * sizeof(*h->args));
	}
	if (f->nr_args)
		memcpy(h->args, f->args, f->nr_args * sizeof(*h->args));
	h->nr_args = f->nr_args;
}

/*
 * Marks the selected frames open on the thread that are not decided yet
 * as shown, from their enter or from the window's start (clipped). A shown
 * scope starts: the held one is written, a pair if it ended in this
 * nanosecond; an enclosing shown scope that started in the same nanosecond
 * gets its "B" now, before this one, so that viewers that keep the file's
 * order for equal times (Perfetto, chrome://tracing) nest them right.
 */
static inline __attribute__((always_inline)) void open_frame(struct chrome_walker *cw,
							     struct chrome_thread *ct, uint32_t i)
{
	const struct chrome *ch = cw->ch;
	struct chrome_frame *f = &ct->stack[i];
	uint64_t from;

	if (!quoted(cw, f->name) || f->enter_ticks >= ch->hi_ticks)
		return;
	from = f->enter_ticks > ch->lo_ticks ? f->enter_ticks : ch->lo_ticks;
	f->start_ns = add_ns(tt_clock_fx_rel_ns(&ch->fx, from), ch->offset_ns);
	f->written = true;
	f->began = false;
	if (ct->held.has && ct->held.end_ns == f->start_ns)
		ct->held.tied = true;
	write_held(cw, ct);
	while (i-- > 0) {
		struct chrome_frame *a = &ct->stack[i];

		if (!a->written)
			continue;
		if (a->start_ns == f->start_ns && !a->began) {
			scope_head(cw, ct, 'B', a->name, a->start_ns);
			tt_out_str(cw->out, "}");
			a->began = true;
		}
		break;
	}
}

static __attribute__((noinline)) void open_pending_all(struct chrome_walker *cw,
						       struct chrome_thread *ct)
{
	for (; ct->nr_decided < ct->sp; ct->nr_decided++)
		open_frame(cw, ct, ct->nr_decided);
}

static inline void open_pending(struct chrome_walker *cw, struct chrome_thread *ct)
{
	if (ct->nr_decided < ct->sp)
		open_pending_all(cw, ct);
}

/*
 * Opens the output and writes its head, once the file's final clock is
 * known (skim or metadata pass), before the first event: a file that
 * cannot be read leaves no output file.
 */
static void open_output(struct chrome *ch)
{
	if (ch->opened)
		return;
	ch->opened = true;
	if (ch->o->output) {
		/* Never truncates the input (tt_emit_open_output()). */
		ch->fd = tt_emit_open_output(ch->o->output, ch->o->trace, ch->open_msg,
					     sizeof(ch->open_msg));
		if (ch->fd < 0) {
			ch->open_rc = ch->fd;
			ch->fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		}
	}
	tt_out_init(&ch->out, ch->fd);
	tt_out_str(&ch->out, "{\"traceEvents\":[");
}

/* The file's output, before its walk: from its metadata (read_metas()). */
static void start(struct chrome *ch, const struct tt_trace *meta)
{
	uint64_t span;

	if (ch->started)
		return;
	ch->started = true;
	open_output(ch);
	if (!ch->has_pid)
		ch->pid = meta->hdr.pid;
	tt_trace_clock(meta, &ch->clock);
	tt_clock_fx_init(&ch->fx, &ch->clock);
	tt_options_window(ch->o, &ch->clock, &ch->lo_ticks, &span);
	ch->hi_ticks = span == UINT64_MAX || ch->lo_ticks > UINT64_MAX - span
			       ? UINT64_MAX
			       : ch->lo_ticks + span;
}

/*
 * Every walker, at each thread's first events in the file's order
 * (scopes.h, thread_seen): the thread's tid and rank, so that every walker
 * has the same tids, whichever pairs the thread.
 */
static void chrome_thread_seen(void *ctx, struct tt_trace *tr, struct tt_thread *th)
{
	struct chrome_walker *cw = ctx;
	const uint32_t idx = (uint32_t)(th - tr->threads);
	/* As the walk's thread filter decides (front.c): by the final name. */
	const struct tt_thread *final = tt_trace_find_thread(&cw->ch->rep->meta, th->serial);

	cw->tr = tr;
	if (idx >= cw->nr_seen) {
		cw->rank = tt_xrealloc(cw->rank, ((size_t)idx + 1) * sizeof(*cw->rank));
		for (; cw->nr_seen <= idx; cw->nr_seen++)
			cw->rank[cw->nr_seen] = UINT32_MAX;
	}
	cw->rank[idx] = cw->nr_ranked++;
	if (tt_options_thread_selected(cw->ch->o, final ? final : th))
		tid_at_first_event(cw, tr, th);
}

static void *chrome_thread_begin(void *ctx, const struct tt_thread *th)
{
	struct chrome_walker *cw = ctx;
	struct chrome *ch = cw->ch;
	struct chrome_thread *ct = tt_xcalloc(1, sizeof(*ct));
	const uint32_t idx = (uint32_t)(th - cw->tr->threads);

	assert(th->has_out_id && idx < cw->nr_seen); /* thread_seen() came first */
	ct->cw = cw;
	ct->rank = cw->rank[idx];
	ct->tid = th->out_id;
	ct->head_len = (uint32_t)snprintf(ct->head, sizeof(ct->head),
					  ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64 ",\"ts\":", ch->pid, ct->tid);
	ct->next = cw->threads;
	cw->threads = ct;
	return ct;
}

/* Every walker, after each record: its lane is written up to there. */
static void chrome_progress(void *ctx, struct tt_trace *tr)
{
	struct chrome_walker *cw = ctx;

	cw->tr = tr;
	tt_lane_done(cw->lane, tr->pos);
}

static void pass_window(struct chrome_walker *cw, struct chrome_thread *ct);

static uint32_t chrome_enter(void *tctx, uint32_t parent_slot, uint32_t name, uint64_t ticks,
			     bool in_window)
{
	struct chrome_thread *ct = tctx;
	struct chrome_walker *cw = ct->cw;
	const struct chrome *ch = cw->ch;
	struct chrome_frame *f;

	(void)parent_slot;
	(void)in_window;
	if (ticks >= ch->hi_ticks && !ct->passed)
		pass_window(cw, ct);
	if (ct->sp == ct->cap) {
		uint32_t cap = ct->cap ? 2 * ct->cap : 64;

		ct->stack = tt_xrealloc(ct->stack, cap * sizeof(*ct->stack));
		memset(ct->stack + ct->cap, 0, (cap - ct->cap) * sizeof(*ct->stack));
		ct->cap = cap;
	}
	f = &ct->stack[ct->sp++];
	f->name = name;
	f->enter_ticks = ticks;
	f->written = false;
	f->tailed = false;
	f->began = false;
	f->nr_args = 0;
	tt_keyidx_clear(&f->idx);
	if (ticks >= ch->lo_ticks && ticks < ch->hi_ticks) {
		if (__builtin_expect(ct->nr_decided + 1 == ct->sp, 1)) { /* only this one */
			open_frame(cw, ct, ct->sp - 1);
			ct->nr_decided = ct->sp;
		} else {
			open_pending_all(cw, ct);
		}
	}
	return ct->sp; /* the frame's index + 1 */
}

/* Closes the top frame at `ticks`: its X, clipped to the window; a frame
 * that spans the window's start with no event inside is shown from here. */
static void close_top(struct chrome_walker *cw, struct chrome_thread *ct, uint64_t ticks,
		      const char *mark);

/*
 * A thread's first event at or after --to (or the end of the file after
 * it): every scope still open on it that began before --to ends at --to for
 * this output, written now, clipped, with no error of its own (what happens
 * to it later is outside the window), and so is its held scope; nothing of
 * the thread is written after. The events go to the tail file, copied into
 * the output in file_trailer(), thread by thread, so that the output does
 * not depend on where in the file each thread passed the window: a walk
 * through the frame index (engine/index.h), which stops decoding after the
 * window, writes the very same bytes.
 */
static void pass_window(struct chrome_walker *cw, struct chrome_thread *ct)
{
	const struct chrome *ch = cw->ch;
	struct tt_out *keep = cw->out;
	const uint32_t sp = ct->sp;
	const bool first = cw->first;

	if (ct->passed || ch->hi_ticks == UINT64_MAX)
		return;
	ct->passed = true;
	if (!cw->tail) {
		if (!(cw->tail = tmpfile()))
			tt_oom();
		cw->tail_out = tt_xrealloc(NULL, sizeof(*cw->tail_out));
		tt_out_init(cw->tail_out, fileno(cw->tail));
	}
	cw->out = cw->tail_out;
	cw->first = false; /* each event of a tail starts with ",\n" */
	while (ct->sp)
		close_top(cw, ct, ch->hi_ticks, NULL);
	write_held(cw, ct);
	tt_out_flush(cw->out);
	if (cw->out->failed)
		tt_oom();
	ct->tail_at = cw->tail_bytes;
	ct->tail_len = (uint64_t)ftello(cw->tail) - cw->tail_bytes;
	cw->tail_bytes += ct->tail_len;
	cw->out = keep;
	cw->first = first;
	ct->sp = ct->nr_decided = sp;
	for (uint32_t i = 0; i < sp; i++)
		ct->stack[i].tailed = true;
}

/* The thread's tail (pass_window()) into the output. */
static void write_tail(struct chrome_walker *cw, struct chrome_thread *ct)
{
	char buf[4096];
	uint64_t done = 0;

	while (done < ct->tail_len) {
		size_t want = ct->tail_len - done < sizeof(buf) ? (size_t)(ct->tail_len - done)
								 : sizeof(buf);
		ssize_t n = pread(fileno(cw->tail), buf, want, (off_t)(ct->tail_at + done));
		size_t skip = 0;

		if (n <= 0)
			tt_oom();
		if (done == 0 && cw->first) {
			skip = 1; /* the output's first event: "\n", not ",\n" */
			cw->first = false;
		}
		tt_out_write(cw->out, buf + skip, (size_t)n - skip);
		done += (uint64_t)n;
	}
	ct->tail_len = 0;
}

static void close_top(struct chrome_walker *cw, struct chrome_thread *ct, uint64_t ticks,
		      const char *mark)
{
	const struct chrome *ch = cw->ch;
	struct chrome_frame *f = &ct->stack[ct->sp - 1];
	uint64_t end = ticks < ch->hi_ticks ? ticks : ch->hi_ticks;

	if (ticks >= ch->hi_ticks && !ct->passed)
		pass_window(cw, ct);
	if (f->tailed) { /* written by pass_window() */
		f->tailed = false;
		f->nr_args = 0;
		tt_keyidx_clear(&f->idx);
		ct->sp--;
		if (ct->nr_decided > ct->sp)
			ct->nr_decided = ct->sp;
		return;
	}

	if (ticks >= ch->lo_ticks && ticks < ch->hi_ticks)
		open_pending(cw, ct);
	else if (!f->written && f->enter_ticks < ch->hi_ticks && ticks > ch->lo_ticks)
		open_pending(cw, ct); /* it spans the window: all below it do too */
	if (f->written) {
		if (end < f->enter_ticks)
			end = f->enter_ticks;
		hold(cw, ct, f, f->start_ns, add_ns(tt_clock_fx_rel_ns(&ch->fx, end), ch->offset_ns),
		     mark);
		cw->nr_events++;
	}
	f->nr_args = 0;
	tt_keyidx_clear(&f->idx);
	ct->sp--;
	if (ct->nr_decided > ct->sp)
		ct->nr_decided = ct->sp;
}

static void chrome_act(void *tctx, const struct tt_activation *a)
{
	struct chrome_thread *ct = tctx;
	struct chrome_walker *cw = ct->cw;
	const struct chrome *ch = cw->ch;
	const uint64_t ticks = a->exit_ticks;
	struct chrome_frame *f = &ct->stack[ct->sp - 1];

	/* close_top() where it has the least to do: inside the window, every
	 * frame decided (none pending, so no open_pending()), not tailed. */
	if (__builtin_expect(ticks >= ch->lo_ticks && ticks < ch->hi_ticks &&
				     ct->nr_decided == ct->sp && !f->tailed,
			     1)) {
		if (f->written) {
			hold(cw, ct, f, f->start_ns,
			     add_ns(tt_clock_fx_rel_ns(&ch->fx, ticks < f->enter_ticks ? f->enter_ticks
										: ticks),
				    ch->offset_ns),
			     NULL);
			cw->nr_events++;
		}
		f->nr_args = 0;
		tt_keyidx_clear(&f->idx);
		ct->nr_decided = --ct->sp;
		return;
	}
	close_top(cw, ct, ticks, NULL);
}

static void chrome_error(void *tctx, uint32_t name, uint32_t slot, uint64_t enter_ticks,
			 uint64_t ticks, enum tt_frame_error why)
{
	static const char *const text[] = {
		[TT_FRAME_LEFT] = "\"error\":\"left without an exit\"",
		[TT_FRAME_BACKWARDS] = "\"error\":\"clock went backwards\"",
		[TT_FRAME_TOO_LONG] = "\"error\":\"longer than --max-duration\"",
		[TT_FRAME_OPEN_AT_END] = "\"error\":\"open at the end of the recording\"",
	};
	struct chrome_thread *ct = tctx;

	(void)name;
	(void)slot;
	close_top(ct->cw, ct, ticks < enter_ticks ? enter_ticks : ticks, text[why]);
}

/*
 * Annotations (tracetool(1), chrome): a value is a counter ("C") event of the
 * process, an instant or a message an instant ("i") event of the thread,
 * an argument goes to its frame's args, a flow event is an "s", "t" or "f"
 * event at its time on its thread, which viewers bind to the enclosing
 * slice: the activation it was recorded in (viewers place each event by
 * its ts, whatever its place in the file).
 * Those outside the window (chrome's own, as for scopes) are left out, and
 * so are an argument or a flow event with no open scope.
 */
/* An annotation's name (not NUL-terminated in the file) quoted for JSON; the caller frees it. */
static char *quote_bytes(const char *name, uint32_t name_bytes)
{
	char *q = tt_xrealloc(NULL, (size_t)name_bytes + 1), *quoted;

	memcpy(q, name, name_bytes);
	q[name_bytes] = '\0';
	quoted = tt_emit_json_quote(q);
	free(q);
	if (!quoted)
		tt_oom();
	return quoted;
}

struct qname_key {
	const struct chrome_thread *ct;
	const char *name;
	uint32_t name_bytes;
};

static bool qname_eq(const void *ctx, uint32_t k)
{
	const struct qname_key *key = ctx;
	const struct chrome_qname *e = &key->ct->qnames[k];

	return e->name_bytes == key->name_bytes &&
	       memcmp(e->name, key->name, key->name_bytes) == 0;
}

/*
 * The JSON-quoted name of an annotation, quoted once per thread and name
 * (the cache grows with the names the output shows, never with the
 * annotations); a message's text is quoted each time into *own, which the
 * caller frees.
 */
static const char *quoted_annot_name(struct chrome_thread *ct, const struct tt_annot *a, char **own)
{
	const struct qname_key key = { ct, a->name, a->name_bytes };
	uint32_t h, k;
	struct chrome_qname *e;

	*own = NULL;
	if (a->kind == TT_ANNOT_MESSAGE)
		return *own = quote_bytes(a->name, a->name_bytes);
	h = tt_hash_bytes(a->name, a->name_bytes); /* seeded: hmap.h */
	k = tt_hmap_find(&ct->qname_map, h, qname_eq, &key);
	if (k != TT_HMAP_NONE)
		return ct->qnames[k].quoted;
	if (ct->nr_qnames == ct->cap_qnames) {
		ct->cap_qnames = ct->cap_qnames ? 2 * ct->cap_qnames : 16;
		ct->qnames = tt_xrealloc(ct->qnames, ct->cap_qnames * sizeof(*ct->qnames));
	}
	tt_hmap_put(&ct->qname_map, h, ct->nr_qnames);
	e = &ct->qnames[ct->nr_qnames++];
	e->name = tt_xrealloc(NULL, a->name_bytes ? a->name_bytes : 1);
	memcpy(e->name, a->name, a->name_bytes);
	e->name_bytes = a->name_bytes;
	e->quoted = quote_bytes(a->name, a->name_bytes);
	return e->quoted;
}

static void free_qnames(struct chrome_thread *ct)
{
	for (uint32_t i = 0; i < ct->nr_qnames; i++) {
		free(ct->qnames[i].name);
		free(ct->qnames[i].quoted);
	}
	free(ct->qnames);
	ct->qnames = NULL;
	ct->nr_qnames = ct->cap_qnames = 0;
	tt_hmap_fini(&ct->qname_map);
}

/* A frame's arguments by their quoted key's pointer (keyidx.h). */
static uint32_t ptr_hash(const char *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h ^ h >> 29);
}

static uint32_t arg_hash(const void *ctx, uint32_t i)
{
	return ptr_hash(((const struct chrome_frame *)ctx)->args[i].qkey);
}

struct arg_probe {
	const struct chrome_frame *f;
	const char *qkey;
};

static bool arg_same(const void *ctx, uint32_t i)
{
	const struct arg_probe *p = ctx;

	return p->f->args[i].qkey == p->qkey;
}

static void chrome_annot(void *tctx, uint32_t slot, uint32_t depth, const struct tt_annot *a)
{
	struct chrome_thread *ct = tctx;
	struct chrome_walker *cw = ct->cw;
	const struct chrome *ch = cw->ch;
	char buf[160], at[32];
	const char *ph;

	if (a->kind == TT_ANNOT_ARG) {
		struct chrome_frame *f;

		if (!depth || slot == 0 || slot > ct->sp)
			return;
		f = &ct->stack[slot - 1];
		char *own;
		const char *qk = quoted_annot_name(ct, a, &own); /* an ARG: not own */

		/* Set twice in one activation: the later value wins. The
		 * cache gives one pointer per name; past TT_KEYIDX_FROM keys an
		 * index finds it (a scan was quadratic in the keys). */
		const struct arg_probe pr = { f, qk };
		uint32_t i = UINT32_MAX;

		if (tt_keyidx_is_built(&f->idx)) {
			i = tt_keyidx_find(&f->idx, ptr_hash(qk), arg_same, &pr);
		} else {
			for (uint32_t k = 0; k < f->nr_args && i == UINT32_MAX; k++)
				if (f->args[k].qkey == qk)
					i = k;
		}
		if (i != UINT32_MAX) {
			f->args[i].v = a->i;
			return;
		}
		if (f->nr_args == f->cap_args) {
			f->cap_args = f->cap_args ? 2 * f->cap_args : 4;
			f->args = tt_xrealloc(f->args, f->cap_args * sizeof(*f->args));
		}
		f->args[f->nr_args].qkey = qk;
		f->args[f->nr_args++].v = a->i;
		tt_keyidx_added(&f->idx, f->nr_args, arg_hash, f);
		return;
	}
	if (a->ticks < ch->lo_ticks || a->ticks >= ch->hi_ticks)
		return;
	if (a->kind >= TT_ANNOT_FLOW_BEGIN && !depth)
		return;
	open_pending(cw, ct); /* the enclosing slices first */
	char *own;
	const char *qn = quoted_annot_name(ct, a, &own);

	fmt_us(at, add_ns(tt_clock_rel_ns(&ch->clock, a->ticks), ch->offset_ns))[at] = '\0';
	begin_event(cw);
	switch (a->kind) {
	case TT_ANNOT_VALUE:
		tt_out_str(cw->out, "{\"ph\":\"C\",\"name\":");
		tt_out_str(cw->out, qn);
		if (a->is_double)
			snprintf(buf, sizeof(buf), ",\"args\":{\"value\":%.17g}", a->d);
		else
			snprintf(buf, sizeof(buf), ",\"args\":{\"value\":%" PRId64 "}", a->i);
		/* JSON has no NaN or infinity: such a value is shown as null. */
		if (a->is_double && !(a->d == a->d && a->d - a->d == 0))
			snprintf(buf, sizeof(buf), ",\"args\":{\"value\":null}");
		tt_out_str(cw->out, buf);
		break;
	case TT_ANNOT_INSTANT:
	case TT_ANNOT_MESSAGE:
		tt_out_str(cw->out, "{\"ph\":\"i\",\"s\":\"t\",\"name\":");
		tt_out_str(cw->out, qn);
		if (a->kind == TT_ANNOT_MESSAGE) {
			tt_out_str(cw->out, ",\"cat\":\"message\",\"args\":{\"message\":");
			tt_out_str(cw->out, qn);
			tt_out_str(cw->out, "}");
		}
		break;
	default: /* flows */
		ph = a->kind == TT_ANNOT_FLOW_BEGIN ? "s" : a->kind == TT_ANNOT_FLOW_STEP ? "t" : "f";
		snprintf(buf, sizeof(buf), "{\"ph\":\"%s\",\"cat\":\"flow\",\"id\":\"0x%" PRIx64
			 "\"%s,\"name\":", ph, a->id, *ph == 'f' ? ",\"bp\":\"e\"" : "");
		tt_out_str(cw->out, buf);
		tt_out_str(cw->out, qn);
		break;
	}
	snprintf(buf, sizeof(buf), ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64 ",\"ts\":%s}", ch->pid,
		 ct->tid, at);
	tt_out_str(cw->out, buf);
	free(own);
	cw->nr_annots++;
}

/*
 * A snapshot's scope open when its window started (FORMAT.md §3.20): a
 * complete ("X") event from the window's start to its exit, marked so. It
 * encloses everything before its exit on the thread, and viewers nest
 * events that start together by duration.
 */
static void chrome_open_at_start(void *tctx, uint32_t name, uint64_t exit_ticks)
{
	struct chrome_thread *ct = tctx;
	struct chrome_walker *cw = ct->cw;
	const struct chrome *ch = cw->ch;
	struct chrome_frame f = { .name = name, .written = true };
	uint64_t from = cw->tr->snapshot.window_start_ticks; /* every replica reads it */

	if (!quoted(cw, name) || exit_ticks < ch->lo_ticks || exit_ticks >= ch->hi_ticks)
		return;
	if (from < ch->lo_ticks)
		from = ch->lo_ticks;
	if (exit_ticks < from)
		exit_ticks = from;
	f.start_ns = add_ns(tt_clock_fx_rel_ns(&ch->fx, from), ch->offset_ns);
	hold(cw, ct, &f, f.start_ns, add_ns(tt_clock_fx_rel_ns(&ch->fx, exit_ticks), ch->offset_ns),
	     "\"open at window start\":true");
	cw->nr_events++;
}

static const struct tt_consumer chrome_consumer = {
	.thread_begin = chrome_thread_begin,
	.enter = chrome_enter,
	.act = chrome_act,
	.error = chrome_error,
	.annot = chrome_annot,
	.open_at_start = chrome_open_at_start,
	.thread_seen = chrome_thread_seen,
	.progress = chrome_progress,
	.eager_names = true, /* labels alike on every walker */
	.needs_meta = true,
	.no_times = true, /* the trailer counts errors only */
};

/* An event of the output's own, after the walk (the file's end). */
static void out_event(struct chrome *ch)
{
	tt_out_str(&ch->out, ch->first ? "\n" : ",\n");
	ch->first = false;
}

/*
 * The file's "M" events, after its events (viewers take metadata events
 * anywhere in the array): the process's name, each selected thread's final
 * name and its place in the file. Threads with no event get their tid here.
 */
static void metadata(struct chrome *ch)
{
	struct tt_trace *tr = &ch->rep->tr;
	char buf[256];
	char *q;

	/* Walker 0 saw every thread of tr, its replica (thread_seen()). */
	for (uint32_t i = 0; i < tr->nr_threads; i++)
		assign_tid(&ch->walkers[0], &tr->threads[i]);

	/* The program's file name when the trace has it (MODULE, 1.1), as
	 * the viewers show processes: "name", with the pid beside it. */
	const char *prog = tt_symbols_program(tr->syms);
	const char *base = prog ? strrchr(prog, '/') : NULL;

	if (prog) {
		q = tt_emit_json_quote(base ? base + 1 : prog);
		if (!q)
			tt_oom();
	} else {
		snprintf(buf, sizeof(buf), "\"pid %" PRIu32 "\"", ch->pid);
		q = strdup(buf);
		if (!q)
			tt_oom();
	}
	out_event(ch);
	snprintf(buf, sizeof(buf),
		 "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu32
		 ",\"tid\":0,\"args\":{\"name\":",
		 ch->pid);
	tt_out_str(&ch->out, buf);
	tt_out_str(&ch->out, q);
	tt_out_str(&ch->out, "}}");
	free(q);
	for (uint32_t i = 0; i < tr->nr_threads; i++) {
		const struct tt_thread *th = &tr->threads[i];
		char label[4200];

		if (!tt_options_thread_selected(ch->o, th))
			continue;
		tt_thread_label(th, label, sizeof(label));
		q = tt_emit_json_quote(label);
		if (!q)
			tt_oom();
		out_event(ch);
		snprintf(buf, sizeof(buf),
			 "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu32
			 ",\"tid\":%" PRIu64 ",\"args\":{\"name\":",
			 ch->pid, th->out_id);
		tt_out_str(&ch->out, buf);
		tt_out_str(&ch->out, q);
		tt_out_str(&ch->out, "}}");
		free(q);
		out_event(ch);
		snprintf(buf, sizeof(buf),
			 "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%" PRIu32
			 ",\"tid\":%" PRIu64 ",\"args\":{\"sort_index\":%" PRIu32 "}}",
			 ch->pid, th->out_id, i);
		tt_out_str(&ch->out, buf);
	}
}

struct sframe_key {
	const struct chrome *ch;
	uint32_t parent;
	const char *qname, *qmodule;
};

static bool sframe_eq(const void *ctx, uint32_t id)
{
	const struct sframe_key *k = ctx;
	const struct chrome_sframe *f = &k->ch->sframes[id];

	return f->parent == k->parent && !strcmp(f->qname, k->qname) &&
	       !strcmp(f->qmodule, k->qmodule);
}

/* The "sf" id (1...) of the frame (parent, qname, qmodule), added when new;
 * names come from the file: hashed with the seeded hash (hmap.h). */
static uint32_t sframe_id(struct chrome *ch, uint32_t parent, const char *qname,
			  const char *qmodule)
{
	const struct sframe_key k = { ch, parent, qname, qmodule };
	uint32_t h = tt_hash_bytes(qname, strlen(qname)) ^
		     tt_hash_u32(tt_hash_bytes(qmodule, strlen(qmodule)) ^ tt_hash_u32(parent));
	uint32_t id = tt_hmap_find(&ch->sframe_map, h, sframe_eq, &k);

	if (id != TT_HMAP_NONE)
		return id + 1;
	if (ch->nr_sframes == ch->cap_sframes) {
		ch->cap_sframes = ch->cap_sframes ? 2 * ch->cap_sframes : 256;
		ch->sframes = tt_xrealloc(ch->sframes, ch->cap_sframes * sizeof(*ch->sframes));
	}
	tt_hmap_put(&ch->sframe_map, h, ch->nr_sframes);
	ch->sframes[ch->nr_sframes] = (struct chrome_sframe){
		parent, tt_xstrndup(qname, strlen(qname)), tt_xstrndup(qmodule, strlen(qmodule))
	};
	return ++ch->nr_sframes;
}

static char *json_quote(const char *s)
{
	char *q = tt_emit_json_quote(s);

	if (!q)
		tt_oom();
	return q;
}

/*
 * The file's stack samples (REC_SAMPLE), on their threads' tracks, inside
 * the --from/--to window and of the --thread threads, twice: a sample event
 * ("P", category "sample", named by the function running) whose "sf" is its
 * leaf in the output's "stackFrames" tree (the Trace Event Format's
 * sampling, which chrome://tracing shows with its call stack), and an
 * instant of the same name with the stack root first in args.stack, which
 * Perfetto UI's JSON importer shows (it reads no sample events).
 */
static void write_samples(struct chrome *ch)
{
	struct tt_trace *tr = &ch->rep->tr;
	struct tt_options o = TT_OPTIONS_INIT;
	struct tt_samples_opts so = { 0 };
	struct tt_samples s;
	char msg[512], buf[256], at[32];
	char *stack = NULL;
	char **qnames, **qmods;
	uint32_t *leaf; /* per stack: its leaf's sf, 0 not yet */
	size_t cap = 0;

	o.trace = tr->path;
	if (tt_samples_read(&s, &o, &so, msg, sizeof(msg)) != TT_OK) {
		tt_samples_fini(&s);
		return; /* the main walk read the same file: said there */
	}
	qnames = tt_xcalloc(s.nr_funcs + 1, sizeof(*qnames));
	qmods = tt_xcalloc(s.nr_funcs + 1, sizeof(*qmods));
	leaf = tt_xcalloc(s.nr_stacks + 1, sizeof(*leaf));
	for (size_t i = 0; i < s.nr_rows; i++) {
		const struct tt_srow *row = &s.rows[i];
		const struct tt_sstack *stk = &s.stacks[row->stack];
		const uint32_t *ids = s.frames + stk->at;
		const struct tt_thread *th =
			tt_trace_find_thread(tr, s.files[0].tr.threads[row->thread].serial);
		size_t n = 0;

		if (!th || !tt_options_thread_selected(ch->o, th) || row->ticks < ch->lo_ticks ||
		    row->ticks >= ch->hi_ticks)
			continue;
		for (uint32_t k = stk->n; k-- > 0;) {
			const char *name = tt_samples_label(&s, ids[k]);
			size_t len = strlen(name);

			if (!qnames[ids[k]]) {
				qnames[ids[k]] = json_quote(name);
				qmods[ids[k]] = json_quote(s.funcs[ids[k]].module);
			}
			if (n + len + 2 > cap) {
				cap = 2 * (n + len + 2);
				stack = tt_xrealloc(stack, cap);
			}
			if (n)
				stack[n++] = ';';
			memcpy(stack + n, name, len);
			n += len;
			stack[n] = '\0';
		}
		if (stk->n && !leaf[row->stack]) {
			uint32_t sf = 0;

			for (uint32_t k = stk->n; k-- > 0;)
				sf = sframe_id(ch, sf, qnames[ids[k]], qmods[ids[k]]);
			leaf[row->stack] = sf;
		}
		fmt_us(at, add_ns(tt_clock_rel_ns(&ch->clock, row->ticks), ch->offset_ns))[at] = '\0';
		snprintf(buf, sizeof(buf), ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64 ",\"ts\":%s",
			 ch->pid, th->out_id, at);
		if (stk->n) {
			out_event(ch);
			tt_out_str(&ch->out, "{\"ph\":\"P\",\"cat\":\"sample\",\"name\":");
			tt_out_str(&ch->out, qnames[ids[0]]);
			tt_out_str(&ch->out, buf);
			snprintf(at, sizeof(at), ",\"sf\":%" PRIu32 "}", leaf[row->stack]);
			tt_out_str(&ch->out, at);
		}
		out_event(ch);
		tt_out_str(&ch->out, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sample\",\"name\":");
		if (stk->n)
			tt_out_str(&ch->out, qnames[ids[0]]);
		else
			tt_out_str(&ch->out, "\"\"");
		tt_out_str(&ch->out, buf);
		tt_out_str(&ch->out, ",\"args\":{\"stack\":");
		char *q = json_quote(stack && n ? stack : "");

		tt_out_str(&ch->out, q);
		free(q);
		tt_out_str(&ch->out, "}}");
		ch->nr_samples++;
	}
	for (uint32_t f = 0; f < s.nr_funcs; f++) {
		free(qnames[f]);
		free(qmods[f]);
	}
	free(qnames);
	free(qmods);
	free(leaf);
	free(stack);
	tt_samples_fini(&s);
}

/* The output's "stackFrames": each frame of the samples' stacks by its
 * "sf" id, with its function, module (category) and parent. */
static void write_sframes(struct chrome *ch)
{
	char buf[64];

	if (!ch->nr_sframes)
		return;
	tt_out_str(&ch->out, ",\"stackFrames\":{");
	for (uint32_t i = 0; i < ch->nr_sframes; i++) {
		const struct chrome_sframe *f = &ch->sframes[i];

		snprintf(buf, sizeof(buf), "%s\n\"%" PRIu32 "\":{\"name\":", i ? "," : "", i + 1);
		tt_out_str(&ch->out, buf);
		tt_out_str(&ch->out, f->qname);
		tt_out_str(&ch->out, ",\"category\":");
		tt_out_str(&ch->out, f->qmodule);
		if (f->parent) {
			snprintf(buf, sizeof(buf), ",\"parent\":\"%" PRIu32 "\"", f->parent);
			tt_out_str(&ch->out, buf);
		}
		tt_out_str(&ch->out, "}");
	}
	tt_out_str(&ch->out, "\n}");
}

static void sframes_fini(struct chrome *ch)
{
	for (uint32_t i = 0; i < ch->nr_sframes; i++) {
		free(ch->sframes[i].qname);
		free(ch->sframes[i].qmodule);
	}
	free(ch->sframes);
	tt_hmap_fini(&ch->sframe_map);
}

/* The file's own end: an instant per thread that dropped scopes; its
 * counts into the totals of otherData. */
/* Orders threads by their rank, the latest seen first. */
static int by_rank_desc(const void *a, const void *b)
{
	const struct chrome_thread *x = *(struct chrome_thread *const *)a;
	const struct chrome_thread *y = *(struct chrome_thread *const *)b;

	return (x->rank < y->rank) - (x->rank > y->rank);
}

/*
 * Each thread's tail (pass_window()) and held scope, written when the walk
 * is done, into the output after every walker's events: thread by thread,
 * the thread seen last first (the order of one walker's list of threads,
 * whatever the number of walkers).
 */
static void write_ends(struct chrome *ch)
{
	struct chrome_thread **all = NULL;
	size_t n = 0, cap = 0;

	for (unsigned w = 0; w < ch->nr_walkers; w++)
		for (struct chrome_thread *ct = ch->walkers[w].threads; ct; ct = ct->next) {
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				all = tt_xrealloc(all, cap * sizeof(*all));
			}
			all[n++] = ct;
		}
	if (n)
		qsort(all, n, sizeof(*all), by_rank_desc);
	for (size_t i = 0; i < n; i++) {
		struct chrome_walker *cw = all[i]->cw;

		cw->out = &ch->out;
		cw->first = ch->first;
		write_tail(cw, all[i]);
		write_held(cw, all[i]);
		ch->first = cw->first;
	}
	free(all);
}

static void file_trailer(struct chrome *ch)
{
	struct tt_report *rep = ch->rep;
	char buf[512], at[32];

	/* With --from/--to: the errors of the window, the scopes it shows
	 * with an error (tracetool(1), chrome); else the file's. */
	if (ch->o->has_from || ch->o->has_to)
		ch->all_errors += ch->nr_marked;
	for (size_t i = 0; i < rep->nr_rows && !(ch->o->has_from || ch->o->has_to); i++)
		ch->all_errors += rep->rows[i].errors;
	if (rep->tr.has_snapshot) {
		/* A flight-recorder snapshot's trigger: a global instant (FORMAT.md §3.20). */
		char *q = tt_emit_json_quote(rep->tr.snapshot_reason ? rep->tr.snapshot_reason : "");

		if (!q)
			tt_oom();
		fmt_us(at, add_ns(tt_clock_rel_ns(&ch->clock, rep->tr.snapshot.trigger_ticks),
				  ch->offset_ns))[at] = '\0';
		out_event(ch);
		snprintf(buf, sizeof(buf),
			 "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"snapshot #%" PRIu32
			 "\",\"pid\":%" PRIu32 ",\"tid\":0,\"ts\":%s,\"args\":{\"reason\":",
			 rep->tr.snapshot.number, ch->pid, at);
		tt_out_str(&ch->out, buf);
		tt_out_str(&ch->out, q);
		snprintf(buf, sizeof(buf), ",\"suppressed\":%" PRIu64 "}}",
			 rep->tr.snapshot.nr_suppressed);
		tt_out_str(&ch->out, buf);
		free(q);
	}
	write_ends(ch);
	metadata(ch);
	if (rep->tr.has_sampling)
		write_samples(ch);
	/* At the file's last tick as its metadata (skim or pass) has it: END's. */
	fmt_us(at, add_ns(tt_clock_rel_ns(&ch->clock, rep->meta.max_ticks), ch->offset_ns))[at] = '\0';
	for (uint32_t i = 0; i < rep->tr.nr_threads; i++) {
		const struct tt_thread *th = &rep->tr.threads[i];

		if (!th->nr_dropped || !tt_options_thread_selected(ch->o, th))
			continue;
		ch->all_dropped += th->nr_dropped;
		out_event(ch);
		snprintf(buf, sizeof(buf),
			 "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"%" PRIu64
			 " scopes dropped\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64
			 ",\"ts\":%s,\"args\":{\"dropped\":%" PRIu64 "}}",
			 th->nr_dropped, ch->pid, th->out_id, at, th->nr_dropped);
		tt_out_str(&ch->out, buf);
	}
	ch->all_events += ch->nr_events;
	ch->any_truncated |= rep->tr.truncated;
	if (rep->problems[0]) {
		size_t n = strlen(ch->all_problems);
		int k = 0;

		if (ch->o->nr_traces > 1 && n + 4 < sizeof(ch->all_problems))
			k = snprintf(ch->all_problems + n, sizeof(ch->all_problems) - n, "%s%s: ",
				     n ? "; " : "", rep->tr.path);
		if (k >= 0 && n + (size_t)k < sizeof(ch->all_problems))
			memccpy(ch->all_problems + n + k, rep->problems, '\0',
				sizeof(ch->all_problems) - n - (size_t)k);
		ch->all_problems[sizeof(ch->all_problems) - 1] = '\0';
	}
}

static void trailer(struct chrome *ch)
{
	char buf[512];
	char *q;

	tt_out_str(&ch->out, "\n]");
	write_sframes(ch);
	snprintf(buf, sizeof(buf),
		 ",\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"tracetool (rec) "
		 TT_VERSION "\",\"events\":\"%" PRIu64 "\",\"dropped_scopes\":\"%" PRIu64
		 "\",\"errors\":\"%" PRIu64 "\",\"truncated\":\"%s\",\"problems\":",
		 ch->all_events, ch->all_dropped, ch->all_errors,
		 ch->any_truncated ? "true" : "false");
	tt_out_str(&ch->out, buf);
	q = tt_emit_json_quote(ch->all_problems);
	if (!q)
		tt_oom();
	tt_out_str(&ch->out, q);
	free(q);
	tt_out_str(&ch->out, "}}\n");
}

/* Frees what a walker kept of one file (its threads and names). */
static void walker_fini(struct chrome_walker *cw)
{
	for (uint32_t i = 0; i < cw->nr_quoted; i++)
		free(cw->quoted[i]);
	free(cw->quoted);
	free(cw->quoted_len);
	free(cw->selected);
	tt_inc_labels_fini(&cw->labels);
	while (cw->threads) {
		struct chrome_thread *ct = cw->threads;

		cw->threads = ct->next;
		for (uint32_t i = 0; i < ct->cap; i++) {
			free(ct->stack[i].args);
			tt_keyidx_clear(&ct->stack[i].idx);
		}
		free(ct->stack);
		free(ct->held.args);
		free_qnames(ct);
		for (uint32_t i = 0; i < ct->nr_prefix; i++)
			free(ct->prefix[i].s);
		free(ct->prefix);
		free(ct);
	}
	free(cw->ids);
	tt_hmap_fini(&cw->id_map);
	free(cw->rank);
	if (cw->tail)
		fclose(cw->tail);
	free(cw->tail_out);
	memset(cw, 0, sizeof(*cw));
}

/* Frees what chrome kept of one file. */
static void end_file(struct chrome *ch)
{
	for (unsigned w = 0; w < ch->nr_walkers; w++)
		walker_fini(&ch->walkers[w]);
	if (ch->nr_walkers)
		tt_lanes_fini(&ch->lanes);
	ch->nr_walkers = 0;
	ch->started = false;
	ch->nr_events = 0;
	ch->nr_marked = 0;
}

/*
 * Each file's metadata first (rep->meta of its main pass): a skim of its
 * first and last frames when once and the skim gives the final clock for
 * certain (tt_trace_skim_exact(); *nr_once counts them), else a metadata
 * pass (a file with no END, damaged, of one frame...: read twice). With
 * several files: the shared timeline's origin, the earliest wall-clock
 * start (FILE_HEADER start_real_ns, taken with start_ticks: runs.h), and a
 * distinct pid per file (a reused pid moves above every pid of the files).
 * Return: the index of a file that cannot be read, or -1.
 */
static int read_metas(const struct tt_options *o, bool once, unsigned *nr_once,
		      struct tt_trace *metas, int64_t *offset_ns, uint32_t *pids, char *msg,
		      size_t msg_bytes)
{
	uint64_t base = UINT64_MAX;
	uint32_t next = 0;

	for (unsigned i = 0; i < o->nr_traces; i++) {
		tt_trace_init(&metas[i], o->traces[i]);
		if ((o->has_from || o->has_to) && tt_index_for(o->traces[i])) {
			/* A window: the whole metadata from the frame index's
			 * stand-ins (engine/index.h), no frame read. */
			metas[i].use_index = true;
			if (tt_trace_walk(&metas[i], NULL, NULL, msg, msg_bytes) != TT_OK)
				return (int)i;
			(*nr_once) += once;
		} else if (once && tt_trace_skim_exact(&metas[i])) {
			(*nr_once)++;
		} else {
			/* The full pass, with its own messages. */
			tt_trace_fini(&metas[i]);
			tt_trace_init(&metas[i], o->traces[i]);
			if (tt_trace_walk(&metas[i], NULL, NULL, msg, msg_bytes) != TT_OK)
				return (int)i;
		}
		if (metas[i].hdr.start_real_ns < base)
			base = metas[i].hdr.start_real_ns;
		if (metas[i].hdr.pid >= next)
			next = metas[i].hdr.pid + 1;
	}
	for (unsigned i = 0; i < o->nr_traces; i++) {
		uint64_t d = metas[i].hdr.start_real_ns - base;

		offset_ns[i] = d > INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)d;
		pids[i] = metas[i].hdr.pid;
		for (unsigned k = 0; k < i; k++)
			if (pids[k] == pids[i]) {
				pids[i] = next++;
				break;
			}
	}
	return -1;
}

/* True if path is the same file as one of the inputs after the first
 * (tt_emit_open_output() checks the first). */
static bool is_other_input(const struct tt_options *o, const char *path)
{
	struct stat a, b;

	if (stat(path, &a) != 0)
		return false;
	for (unsigned i = 1; i < o->nr_traces; i++)
		if (stat(o->traces[i], &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return true;
	return false;
}

/* Each file (front.h, each_file): on the shared timeline with several. */
static void file_begin(void *ctx, struct tt_walk_file *f)
{
	struct chrome *ch = ctx;

	ch->rep = f->rep;
	if (ch->o->nr_traces > 1) {
		ch->offset_ns = ch->offsets[f->index];
		ch->pid = ch->pids[f->index];
		ch->has_pid = true;
	}
	start(ch, &ch->metas[f->index]);
	/* A walker per replica, each in a lane of the output (lanes.h); one for
	 * a window read through the frame index (engine/index.h), which walks
	 * the replicas in turn on one thread: more would only spill. */
	if ((ch->o->has_from || ch->o->has_to) && tt_index_for(f->o->trace))
		f->nr_walkers = 1;
	ch->nr_walkers = f->nr_walkers;
	if (ch->nr_walkers > ch->max_walkers)
		ch->max_walkers = ch->nr_walkers;
	tt_lanes_init(&ch->lanes, ch->nr_walkers, &ch->out, ch->first);
	ch->lanes.timed = ch->stats;
	for (unsigned w = 0; w < ch->nr_walkers; w++) {
		struct chrome_walker *cw = &ch->walkers[w];

		memset(cw, 0, sizeof(*cw));
		cw->ch = ch;
		cw->lane = &ch->lanes.lanes[w];
		cw->out = &cw->lane->out;
		f->ctxs[w] = cw;
	}
}

/* The walkers' lanes into the output, their counts into the file's. */
static void walk_done(struct chrome *ch)
{
	tt_lanes_finish(&ch->lanes);
	if (ch->lanes.bytes)
		ch->first = false;
	ch->spilled += ch->lanes.spilled;
	for (unsigned w = 0; w < ch->nr_walkers; w++) {
		ch->walker_cpu_ns[w] += ch->lanes.lanes[w].cpu_ns;
		ch->nr_events += ch->walkers[w].nr_events;
		ch->nr_marked += ch->walkers[w].nr_marked;
	}
}

/* ...its events written: the head if no thread wrote it, its warnings and
 * trailer. A failure to open the output stops the walk (ch->open_rc). */
static enum tt_status file_end(void *ctx, struct tt_walk_file *f, char *msg, size_t msg_bytes)
{
	struct chrome *ch = ctx;

	(void)msg, (void)msg_bytes;
	walk_done(ch);
	if (ch->open_rc)
		return TT_ERR_FILE;
	tt_trace_warn(&f->rep->tr);
	file_trailer(ch);
	end_file(ch);
	return TT_OK;
}

int tt_cmd_chrome(int argc, char **argv)
{
	struct tt_options o = TT_OPTIONS_INIT, ro;
	struct tt_report rep;
	struct chrome ch;
	struct tt_walk_spec spec = { .cons = &chrome_consumer, .file_begin = file_begin,
				     .file_end = file_end, .ctx = &ch, .each_file = true,
				     .window_index = true };
	enum tt_status st;
	struct tt_trace *metas = NULL;
	int64_t *offsets = NULL;
	uint32_t *pids = NULL;
	char msg[512];
	int rc = 0, bad;
	unsigned nr_once = 0;
	bool have_rep = false, multi, once, to_file = false;

	argp_parse(&chrome_argp, argc, argv, 0, NULL, &o);
	/* JSON is for a viewer, not for a terminal (perf record writes
	 * perf.data likewise); -o - asks for the terminal all the same. */
	if (o.output && strcmp(o.output, "-") == 0)
		o.output = NULL;
	else if (!o.output && isatty(STDOUT_FILENO))
		o.output = "trace.json", to_file = true;
	memset(&ch, 0, sizeof(ch));
	ch.o = &o;
	ch.first = true;
	ch.fd = STDOUT_FILENO;
	ch.stats = getenv("TRACETOOL_CHROME_STATS") != NULL;
	multi = o.nr_traces > 1;
	/* --thread matches the threads' final names before the first event:
	 * it keeps the metadata pass. */
	once = !o.nr_threads && !getenv("TRACETOOL_TWO_READS");
	metas = tt_xcalloc(o.nr_traces, sizeof(*metas));
	offsets = tt_xcalloc(o.nr_traces, sizeof(*offsets));
	pids = tt_xcalloc(o.nr_traces, sizeof(*pids));
	bad = read_metas(&o, once, &nr_once, metas, offsets, pids, msg, sizeof(msg));
	if (bad >= 0) {
		rc = tt_fail_file(o.traces[bad], msg);
		goto out;
	}
	if (multi) {
		if (o.output && is_other_input(&o, o.output)) {
			rc = tt_fail_file(o.output, "is an input trace; refusing to overwrite it") + 1;
			goto out;
		}
	}
	if (!o.output)
		tt_progress_stdout_streams(); /* JSON goes out while reading */
	ch.offsets = offsets;
	ch.metas = metas;
	ch.pids = pids;
	/* The window is chrome's own (clipped scopes): none for the engine. */
	ro = o;
	ro.has_from = ro.has_to = false;
	spec.metas = metas;
	spec.window_of = &o; /* the frames it needs (engine/index.h) */
	st = tt_walk(&rep, &ro, &spec, msg, sizeof(msg));
	have_rep = true;
	if (st != TT_OK) {
		if (ch.open_rc)
			rc = tt_fail_file(o.output, ch.open_msg) + (ch.open_rc == -2);
		else
			rc = tt_fail_file(tt_report_failed(&rep, &ro), msg);
		goto out;
	}
	if (!ch.all_events && !ch.nr_samples) /* an unmodified program's samples are something */
		fprintf(stderr, "tracetool: %s: warning: no activation to show%s\n", o.trace,
			o.has_from || o.has_to ? " in the window" : "");
	trailer(&ch);
	tt_out_flush(&ch.out);
	if (ch.stats) {
		const char *name = o.output ? o.output : "stdout";
		const unsigned nr = ch.max_walkers;

		fprintf(stderr, "%s: %u of %u file(s) read once\n%s: %u walker(s), %" PRIu64
			" bytes through temporary files\n%s: walkers' CPU time (s):", name, nr_once,
			o.nr_traces, name, nr, ch.spilled, name);
		for (unsigned w = 0; w < nr; w++)
			fprintf(stderr, " %.3f", (double)ch.walker_cpu_ns[w] / 1e9);
		fputc('\n', stderr);
	}
	if (ch.out.failed) {
		snprintf(msg, sizeof(msg), "cannot write: %s", strerror(ch.out.err));
		rc = tt_fail_file(o.output ? o.output : "stdout", msg);
	} else if (to_file) {
		fprintf(stderr, "tracetool: wrote %s (standard output is a terminal; -o - writes "
				"there): open it in https://ui.perfetto.dev\n", o.output);
	}
out:
	if (ch.fd != STDOUT_FILENO && ch.fd >= 0)
		close(ch.fd);
	end_file(&ch);
	sframes_fini(&ch);
	if (have_rep)
		tt_report_fini(&rep);
	for (unsigned i = 0; metas && i < o.nr_traces; i++)
		tt_trace_fini(&metas[i]);
	free(metas);
	free(offsets);
	free(pids);
	tt_options_fini(&o);
	return rc;
}
