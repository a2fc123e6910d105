/* SPDX-License-Identifier: MIT */
/*
 * counters.c - REC_COUNTERS: per-thread perf_event_open groups whose values
 * are recorded at every enter and exit of a thread that has them. It owns
 * the accepted event names, the parse of REC_COUNTERS (once per start), the
 * lazy opening of one group per traced thread (on its first probe, never
 * inherited), the reading of the group (rdpmc through the event's mmap'd
 * page where the kernel allows it for every event of the group, one read(2)
 * of the whole group otherwise) and its closing. It does not touch rings:
 * probe.c's counted path pushes the values, writer.c encodes them as
 * FORMAT.md §3.13-§3.14 records.
 *
 * Threads: rec__counters_configure() runs under rec__g.lock at start;
 * rec__counters_open() runs on the thread being attached, under
 * rec__g.lock; rec__counters_read() runs on the owning thread only (probe,
 * possibly in a signal handler: it uses only read(2) or rdpmc and the stack);
 * rec__counters_close() runs on the owning thread at its exit, or on the
 * writer / a forked child once the owner is gone. rec__counters_check()
 * runs on the writer while the owner lives.
 *
 * Descriptors: the group's are moved above the numbers a host's next open()
 * takes (rec__fd_high()), and a probe reads the leader only while it is
 * librec's. A host that closes it (closefrom()) makes the next read fail:
 * that thread's group is never read again. A host that puts a file of its
 * own at that number (dup2()) is found by the writer's check, one fstat()
 * of each live counted thread's leader a pass, before its next drain: from
 * then on, no probe reads it (a read(2) there would take the host's data,
 * move its offset, or wait on its pipe). Between the host's dup2() and that
 * pass a probe may still read it once per probe: a per-probe fstat() would
 * cost 40% of a counted probe (370 ns next to read(2)'s 860 on this VM).
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The accepted names (perf's), with perf's aliases. */
static const struct ctr_kind {
	const char *name;  /* as written in REC_COUNTERS and in the file */
	const char *alias; /* accepted too; the file says `name` */
	uint32_t type;
	uint64_t config;
} kinds[] = {
	{ "cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", "branch-instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", NULL, PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", NULL, PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
};
#define NR_KINDS (sizeof(kinds) / sizeof(kinds[0]))

/*
 * The requested counters, in REC_COUNTERS order without duplicates. Written
 * under rec__g.lock at start; read under it by rec__counters_open().
 * `reported` is set the first time a thread fails to open the event, so
 * that the stderr line is printed once per recording, not once per thread.
 */
static struct {
	uint32_t nr;
	const struct ctr_kind *kind[RECFMT_MAX_COUNTERS];
	bool reported[RECFMT_MAX_COUNTERS];
} req;

const char *rec__counters_known_names(void)
{
	return "cycles instructions cache-references cache-misses branches branch-misses "
	       "bus-cycles stalled-cycles-frontend stalled-cycles-backend ref-cycles cpu-clock "
	       "task-clock page-faults context-switches cpu-migrations minor-faults major-faults "
	       "alignment-faults emulation-faults";
}

static const struct ctr_kind *kind_by_name(const char *s, size_t n)
{
	for (size_t i = 0; i < NR_KINDS; i++) {
		if (strlen(kinds[i].name) == n && memcmp(kinds[i].name, s, n) == 0)
			return &kinds[i];
		if (kinds[i].alias && strlen(kinds[i].alias) == n &&
		    memcmp(kinds[i].alias, s, n) == 0)
			return &kinds[i];
	}
	return NULL;
}

/*
 * rec__counters_configure() - parse REC_COUNTERS (comma-separated names;
 * NULL or "" for none). Unknown names and names past the 32nd get one
 * stderr line each and are left out. Under rec__g.lock, at start.
 * Return: the number of counters requested.
 */
uint32_t rec__counters_configure(const char *list)
{
	memset(&req, 0, sizeof(req));
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const struct ctr_kind *k = kind_by_name(p, n);
		bool dup = false;

		if (n && !k) {
			rec__log("REC_COUNTERS: '%.*s' is not a counter name (known: %s); "
				 "recording the others",
				 (int)(n > 64 ? 64 : n), p, rec__counters_known_names());
		} else if (k) {
			for (uint32_t i = 0; i < req.nr; i++)
				dup |= req.kind[i] == k;
			if (!dup && req.nr == RECFMT_MAX_COUNTERS)
				rec__log("REC_COUNTERS: more than %u counters; '%s' left out",
					 RECFMT_MAX_COUNTERS, k->name);
			else if (!dup)
				req.kind[req.nr++] = k;
		}
		p = end ? end + 1 : p + n;
	}
	return req.nr;
}

static long perf_open(struct perf_event_attr *attr, int group_fd)
{
	return syscall(SYS_perf_event_open, attr, 0 /* this thread */, -1 /* any cpu */,
		       group_fd, PERF_FLAG_FD_CLOEXEC);
}

static int open_one(const struct ctr_kind *k, int group_fd)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = k->type;
	attr.config = k->config;
	attr.read_format = PERF_FORMAT_GROUP;
	attr.inherit = 0; /* this thread only: children and new threads open their own */
	attr.exclude_hv = 1;
	/*
	 * Kernel work done for the thread (page faults, the switch itself)
	 * belongs to the scope: count it where allowed, else user space only
	 * (perf_event_paranoid >= 2 without CAP_PERFMON).
	 */
	fd = perf_open(&attr, group_fd);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		attr.exclude_kernel = 1;
		fd = perf_open(&attr, group_fd);
	}
	return (int)fd;
}

static const char *errno_name(int err)
{
	const char *s = strerrorname_np(err);

	return s ? s : "error";
}

/* Once per recording and event: say why it is not recorded. */
static void report_failure(uint32_t i, int err)
{
	const char *name = req.kind[i]->name;

	if (req.reported[i])
		return;
	req.reported[i] = true;
	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == EINVAL)
		rec__log("REC_COUNTERS: %s: not supported on this machine (%s); recording the "
			 "others", name, errno_name(err));
	else if (err == EACCES || err == EPERM)
		rec__log("REC_COUNTERS: %s: not permitted (%s; see "
			 "/proc/sys/kernel/perf_event_paranoid); recording the others",
			 name, errno_name(err));
	else
		rec__log("REC_COUNTERS: %s: cannot be opened (%s); recording the others", name,
			 errno_name(err));
}

/*
 * rec__counters_rdpmc_usable() - whether an event's mmap'd page lets user
 * space read it with rdpmc (cap_user_rdpmc, and an index while it is
 * scheduled). The decision between rdpmc and read(2) is made with this at
 * open (every event of the group must allow it) and again at each read
 * (index 0: not on a counter right now).
 */
bool rec__counters_rdpmc_usable(const struct perf_event_mmap_page *pc)
{
	return pc && pc->cap_user_rdpmc && pc->index != 0;
}

/*
 * rec__counters_pmc_value() - a counter's value from the page's offset and
 * the raw rdpmc result, which holds pmc_width significant bits (sign-
 * extended, as the kernel's perf_event_mmap_page comment prescribes).
 */
uint64_t rec__counters_pmc_value(uint64_t offset, uint64_t raw, uint16_t width)
{
	if (width == 0 || width > 64)
		return offset;
	if (width < 64) {
		raw <<= 64 - width;
		raw = (uint64_t)((int64_t)raw >> (64 - width));
	}
	return offset + raw;
}

/*
 * rec__counters_open() - on the calling thread, under rec__g.lock: open
 * its group. Return: its state, or NULL when no counter is requested or
 * none could be opened (then the thread records as without REC_COUNTERS).
 */
struct rec__counters *rec__counters_open(void)
{
	struct rec__counters *c;
	bool all_rdpmc = true;

	if (!req.nr)
		return NULL;
	/* mmap, not malloc: this may run in a signal handler (see probe.c). */
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return NULL;
	c->nr_req = req.nr;
	for (uint32_t i = 0; i < req.nr; i++) {
		int fd = open_one(req.kind[i], c->nr ? c->fd[0] : -1);

		c->name[i] = req.kind[i]->name;
		if (fd < 0) {
			report_failure(i, errno);
			continue;
		}
		c->flags[i] = RECFMT_COUNTER_RECORDED;
		c->fd[c->nr] = fd;
		c->page[c->nr] = NULL;
		if (req.kind[i]->type == PERF_TYPE_HARDWARE) {
			void *pg = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED,
					fd, 0);

			if (pg != MAP_FAILED)
				c->page[c->nr] = pg;
		}
		all_rdpmc &= c->page[c->nr] && c->page[c->nr]->cap_user_rdpmc;
		c->nr++;
	}
	if (!c->nr) {
		munmap(c, sizeof(*c));
		return NULL;
	}
	/* Every event open (siblings name the leader by its number): now high. */
	for (uint32_t i = 0; i < c->nr; i++) {
		c->fd[i] = rec__fd_high(c->fd[i]);
		rec__fd_remember(c->fd[i], &c->fd_id[i]); /* fstat: async-signal-safe */
	}
	c->rdpmc = all_rdpmc;
	return c;
}

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t rdpmc(uint32_t counter)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return (uint64_t)hi << 32 | lo;
}

/* The seqlock read of perf_event_mmap_page (see linux/perf_event.h). */
static bool read_rdpmc(const struct perf_event_mmap_page *pc, uint64_t *out)
{
	uint32_t seq, idx;
	uint64_t v;

	do {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		idx = pc->index;
		if (!rec__counters_rdpmc_usable(pc))
			return false;
		v = rec__counters_pmc_value((uint64_t)pc->offset, rdpmc(idx - 1), pc->pmc_width);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	} while (__atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE) != seq);
	*out = v;
	return true;
}
#endif

/*
 * rec__counters_read() - the group's current values, in column order,
 * into vals[0 .. c->nr). Async-signal-safe; errno is left as it was. A
 * failed read(2) leaves zeros (the analyzer then sees no increase, never a
 * wrong one), and so does every read after it: the descriptor may not be
 * librec's any more (see the top of this file).
 */
void rec__counters_read(struct rec__counters *c, uint64_t *vals)
{
	uint64_t buf[1 + RECFMT_MAX_COUNTERS];
	size_t bytes = (1 + (size_t)c->nr) * sizeof(uint64_t);
	int saved_errno;
	ssize_t n;

#if defined(__x86_64__) || defined(__i386__)
	if (c->rdpmc) {
		uint32_t i;

		for (i = 0; i < c->nr && read_rdpmc(c->page[i], &vals[i]); i++)
			;
		if (i == c->nr)
			return;
	}
#endif
	if (__atomic_load_n(&c->gone, __ATOMIC_RELAXED)) {
		memset(vals, 0, c->nr * sizeof(uint64_t));
		return;
	}
	saved_errno = errno;
	do
		n = read(c->fd[0], buf, bytes);
	while (n < 0 && errno == EINTR);
	errno = saved_errno;
	if (n != (ssize_t)bytes || buf[0] != c->nr) {
		__atomic_store_n(&c->gone, 1, __ATOMIC_RELAXED); /* never read it again */
		memset(vals, 0, c->nr * sizeof(uint64_t));
		return;
	}
	memcpy(vals, buf + 1, c->nr * sizeof(uint64_t));
}

int rec__counters_check(struct rec__counters *c)
{
	bool ours;

	if (c->reported)
		return 0;
	/*
	 * With rec__counters_close(): either this sees `closed` and reads no
	 * descriptor, or the closing thread sees `checking` and waits for the
	 * fstat() to end before it closes (seq_cst both ways, Dekker's): never
	 * a check of a descriptor its own thread is closing.
	 */
	__atomic_store_n(&c->checking, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->closed, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&c->checking, 0, __ATOMIC_RELEASE);
		return 0;
	}
	ours = rec__fd_is_ours(c->fd[0], &c->fd_id[0]);
	__atomic_store_n(&c->checking, 0, __ATOMIC_RELEASE);
	if (ours && !__atomic_load_n(&c->gone, __ATOMIC_RELAXED))
		return 0;
	__atomic_store_n(&c->gone, 1, __ATOMIC_RELAXED);
	c->reported = true;
	return ours ? REC__CTR_UNREADABLE : REC__CTR_NOT_OURS;
}

/* Closes the group; c stays readable (the writer still needs nr). */
void rec__counters_close(struct rec__counters *c)
{
	if (!c || c->closed)
		return;
	/* Before any close, and no writer's check of it running (rec__counters_check()). */
	__atomic_store_n(&c->closed, true, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&c->checking, __ATOMIC_SEQ_CST))
		sched_yield(); /* one fstat() */
	for (uint32_t i = c->nr; i-- > 0;) {
		/* c->fd[] stays as it was: the writer may be reading it (its check). */
		int fd = c->fd[i];

		if (c->page[i])
			munmap(c->page[i], (size_t)sysconf(_SC_PAGESIZE));
		c->page[i] = NULL;
		/* Not if the host closed it and its number names a file of the host's now. */
		rec__fd_close(&fd, &c->fd_id[i]);
	}
}

void rec__counters_free(struct rec__counters *c)
{
	if (!c)
		return;
	rec__counters_close(c);
	munmap(c, sizeof(*c));
}
