/* SPDX-License-Identifier: MIT */
/*
 * modules.c - the loaded ELF modules, as a file records them for the
 * analyzer to name code addresses (FORMAT.md §3.10, §3.25): path, load
 * bias, executable ranges, build-id, and when each was mapped.
 *
 * A check lists the modules with dl_iterate_phdr() and writes a MODULE
 * record for each one new to the file and a MODULE_MAP record for each one
 * gone (or back) since the last check, stamped with the check's time, read
 * under the loader's lock: a module a check finds new was mapped after the
 * check before it (whose time is its since_ticks), and one it finds gone
 * was unmapped before it. A check costs one callback when nothing was
 * loaded or unloaded since the last one (glibc's dlpi_adds and dlpi_subs
 * counters). The writer checks before it writes a frame, so a module is in
 * the file before, or in the same frame as, the FUNC records and samples
 * that need it; in librectrace.so, dlclose() checks too, before and after
 * the real one, so a module closed between two writer passes is recorded
 * all the same, with the time it went: its records wait in the file's
 * pending buffer, which the writer's next check moves into its frame. All
 * under scan_lock; it does not know the file's bytes (format/ does).
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* What makes a module the same one as already recorded. */
struct rec__module_key {
	uint64_t bias;
	uint64_t first_start; /* first executable range */
	uint32_t path_hash;
};

/* A module recorded in this file. */
struct rec__module_known {
	struct rec__module_key key;
	uint32_t id;		    /* its MODULE record's */
	uint32_t seen;		    /* the last full check (gen) that found it mapped */
	bool mapped;		    /* as the last check saw it */
};

struct scan {
	struct rec__modules *m;
	struct recfmt_buf *out;
	uintptr_t vdso;
	bool first;   /* the first callback: the main program */
	bool changed; /* dlpi_adds/subs differ from the last check: every module listed */
	uint64_t now_ticks;   /* the check's time, read under the loader's lock */
	uint64_t since_ticks; /* the check before (0 at a file's first) */
	int err;
};

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* NT_GNU_BUILD_ID from the module's PT_NOTE segments, if any. */
static uint32_t find_build_id(const struct dl_phdr_info *info, const uint8_t **out)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (end - p >= (ptrdiff_t)sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)p;
			size_t name = (n->n_namesz + 3u) & ~3u, desc = (n->n_descsz + 3u) & ~3u;
			const uint8_t *q = p + sizeof(*n);

			if ((size_t)(end - q) < name + desc)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(q, "GNU", 4) == 0) {
				*out = q + name;
				return n->n_descsz;
			}
			p = q + name + desc;
		}
	}
	return 0;
}

/* Adds key, mapped, as module id of this file. Return: 0, or -ENOMEM. */
static int add_known(struct rec__modules *m, const struct rec__module_key *key, uint32_t id,
		     uint32_t seen)
{
	if (m->nr_known == m->cap_known) {
		uint32_t cap = m->cap_known ? 2 * m->cap_known : 32;
		struct rec__module_known *k = realloc(m->known, cap * sizeof(*k));

		if (!k)
			return -ENOMEM;
		m->known = k;
		m->cap_known = cap;
	}
	m->known[m->nr_known++] = (struct rec__module_known){ .key = *key, .id = id, .seen = seen,
							      .mapped = true };
	return 0;
}

static struct rec__module_known *find_known(const struct rec__modules *m,
					    const struct rec__module_key *key)
{
	/* Field by field: a struct's padding is not copied by assignment. */
	for (uint32_t i = 0; i < m->nr_known; i++) {
		const struct rec__module_key *k = &m->known[i].key;

		if (k->bias == key->bias && k->first_start == key->first_start &&
		    k->path_hash == key->path_hash)
			return &m->known[i];
	}
	return NULL;
}

/*
 * Whether info is the vDSO (vdso: AT_SYSINFO_EHDR): its program headers are
 * those of the ELF image the kernel mapped there. Not "near it": the dynamic
 * loader is often mapped right after the vDSO's 8 KiB, and was taken for it.
 */
static bool is_vdso(uintptr_t vdso, const struct dl_phdr_info *info)
{
	return vdso && (uintptr_t)info->dlpi_phdr == vdso + ((const ElfW(Ehdr) *)vdso)->e_phoff;
}

/* The last component of a path. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * One line of /proc/self/maps: the path of the file mapped at addr, if it
 * is, and has the loader's name's last component (not a library mapped
 * there since the one named was closed: the static library's snapshots).
 */
static bool maps_line(const char *line, uintptr_t addr, const char *name, char *out, size_t bytes)
{
	static const char deleted[] = " (deleted)";
	unsigned long long lo, hi;
	size_t len;
	int pos = 0;

	if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi, &pos) < 2 || !pos ||
	    addr < lo || addr >= hi || line[pos] != '/')
		return false;
	len = strlen(line + pos);
	if (len > sizeof(deleted) - 1 && strcmp(line + pos + len - (sizeof(deleted) - 1), deleted) == 0)
		len -= sizeof(deleted) - 1; /* where it was: a file there now is checked by build-id */
	if (len >= bytes)
		return false;
	memcpy(out, line + pos, len);
	out[len] = '\0';
	return strcmp(base_name(out), base_name(name)) == 0;
}

/* The kernel's name of the file name mapped at addr (/proc/self/maps). Under scan_lock. */
static bool maps_path(uintptr_t addr, const char *name, char *out, size_t bytes)
{
	static char chunk[2048], line[4096 + 128];
	size_t len = 0;
	bool found = false;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return false;
	while (!found) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n && !found; i++) {
			if (chunk[i] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = chunk[i];
				continue;
			}
			line[len] = '\0';
			len = 0;
			found = maps_line(line, addr, name, out, bytes);
		}
	}
	close(fd);
	return found;
}

/*
 * The path a MODULE record gives (FORMAT.md §3.10: absolute). The loader
 * names a module as it was asked for it: dlopen("./plugin.so"), a library
 * found through LD_LIBRARY_PATH=. or a relative RPATH is "./plugin.so",
 * which a reader in another directory, or the program after a chdir(),
 * could not open (finding F32). Then the kernel's name of the file mapped
 * at addr (its first executable range) when its last component is the
 * loader's (a symbolic link's target's is not), else realpath() now, else
 * the loader's name. Under scan_lock (the static buffer).
 */
static const char *abs_path(const char *path, uintptr_t addr)
{
	static char buf[4096];

	if (!path[0] || path[0] == '/')
		return path;
	if (maps_path(addr, path, buf, sizeof(buf)) || realpath(path, buf))
		return buf;
	return path;
}

static int on_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *s = arg;
	struct rec__modules *m = s->m;
	struct recfmt_range ranges[RECFMT_MAX_MODULE_RANGES];
	struct rec__module_key key;
	struct rec__module_known *k;
	const uint8_t *build_id = NULL;
	uint32_t nr_ranges = 0, build_id_bytes, flags = 0;
	char exe[4096];
	const char *path = info->dlpi_name ? info->dlpi_name : "";

	if (s->first) {
		s->first = false;
		/* Under the loader's lock: no module joins or leaves the list meanwhile. */
		s->now_ticks = rec__clock_now(rec__g.cfg.use_tsc);
		s->since_ticks = m->scanned ? m->checked_ticks : 0;
		if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
			if (m->scanned && info->dlpi_adds == m->adds && info->dlpi_subs == m->subs)
				return 1; /* nothing loaded or unloaded: stop here */
			m->adds = info->dlpi_adds;
			m->subs = info->dlpi_subs;
		}
		m->scanned = true;
		m->gen++;
		s->changed = true;
		if (!path[0]) {
			ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

			if (n > 0) {
				exe[n] = '\0';
				path = exe;
			}
			flags |= RECFMT_MODULE_MAIN;
		}
	}
	for (int i = 0; i < info->dlpi_phnum && nr_ranges < RECFMT_MAX_MODULE_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			ranges[nr_ranges].start = info->dlpi_addr + ph->p_vaddr;
			ranges[nr_ranges].end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			nr_ranges++;
		}
	}
	if (!nr_ranges)
		return 0; /* no code: no function of ours can be in it */
	if (is_vdso(s->vdso, info))
		flags |= RECFMT_MODULE_VDSO;
	key.bias = info->dlpi_addr;
	key.first_start = ranges[0].start;
	key.path_hash = hash_str(path);
	k = find_known(m, &key);
	if (k) {
		k->seen = m->gen;
		if (!k->mapped) {
			/* The same file at the same place again, since the last check. */
			struct recfmt_module_map mm = { k->id, RECFMT_MODULE_MAPPED, s->since_ticks };

			k->mapped = true;
			s->err = recfmt_encode_module_map(s->out, &mm);
		}
		return s->err ? 1 : 0;
	}
	build_id_bytes = find_build_id(info, &build_id);
	s->err = recfmt_encode_module_since(s->out, m->nr_known + 1, flags, info->dlpi_addr, ranges,
					    nr_ranges, build_id, build_id_bytes,
					    abs_path(path, ranges[0].start), s->since_ticks);
	if (!s->err)
		s->err = add_known(m, &key, m->nr_known + 1, m->gen);
	return s->err ? 1 : 0;
}

/*
 * rec__modules_capture() - called by site.c when it registers a function
 * site of a module it has no snapshot of, in the probe's slow path (maybe
 * in a signal handler): the module is mapped, since fn's code is running.
 * _dl_find_object() is lock-free and async-signal-safe (glibc 2.35); the
 * program headers are read from the module's first page, where the ELF
 * header maps them. Return: false for the main program (never unloaded;
 * the writer's scan records it), or when the module cannot be found.
 */
bool rec__modules_capture(uintptr_t fn, struct rec__module_snap *snap, const char **path)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
	struct dl_find_object fo;
	const ElfW(Ehdr) *eh;
	struct dl_phdr_info info;

	if (_dl_find_object((void *)fn, &fo) != 0 || !fo.dlfo_link_map ||
	    !fo.dlfo_link_map->l_name || !fo.dlfo_link_map->l_name[0])
		return false;
	eh = fo.dlfo_map_start;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    eh->e_phoff % _Alignof(ElfW(Phdr)) != 0)
		return false;
	memset(snap, 0, sizeof(*snap));
	memset(&info, 0, sizeof(info));
	info.dlpi_addr = fo.dlfo_link_map->l_addr;
	info.dlpi_phdr = (const ElfW(Phdr) *)(const void *)((const char *)fo.dlfo_map_start +
							      eh->e_phoff);
	info.dlpi_phnum = eh->e_phnum;
	for (int i = 0; i < info.dlpi_phnum && snap->nr_ranges < RECFMT_MAX_MODULE_RANGES; i++) {
		const ElfW(Phdr) *ph = &info.dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			snap->ranges[snap->nr_ranges].start = info.dlpi_addr + ph->p_vaddr;
			snap->ranges[snap->nr_ranges].end = info.dlpi_addr + ph->p_vaddr + ph->p_memsz;
			snap->nr_ranges++;
		}
	}
	if (!snap->nr_ranges)
		return false;
	const uint8_t *id = NULL;
	uint32_t n = find_build_id(&info, &id);

	if (n > RECFMT_MAX_BUILD_ID_BYTES)
		n = 0;
	if (n)
		memcpy(snap->build_id, id, n);
	snap->build_id_bytes = n;
	snap->bias = info.dlpi_addr;
	snap->map_start = (uintptr_t)fo.dlfo_map_start;
	snap->map_end = (uintptr_t)fo.dlfo_map_end;
	snap->path_hash = hash_str(fo.dlfo_link_map->l_name);
	*path = fo.dlfo_link_map->l_name;
	return true;
#else
	(void)fn, (void)snap, (void)path;
	return false;
#endif
}

/*
 * Held across every check (dl_iterate_phdr() and the files' tables: the
 * writer's, a dlclose()'s), and by fork's prepare
 * handler (lifecycle.c) so that no scan is under way when the process
 * forks. glibc before 2.37 does not reset the loader's dl_load_write_lock
 * in a child (BZ #19282, fixed upstream in 2023): a fork while our writer
 * held it left the child's first scan, and so its exit, blocked forever.
 */
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * rec__modules_add_snaps() - a MODULE record for every module snapshot
 * taken since the last call in this file and not recorded yet (same key as
 * the scan's, so neither records a module twice). Writer thread only.
 * nr: rec__site_nr_snaps(); snap_at: rec__site_snap (passed in by the
 * writer, so that modules.c calls nothing in site.c, which calls it).
 */
int rec__modules_add_snaps(struct rec__modules *m, struct recfmt_buf *out, uint32_t nr,
			   const struct rec__module_snap *(*snap_at)(uint32_t i))
{
	int err = 0;

	pthread_mutex_lock(&scan_lock);
	for (; m->nr_snaps_done < nr && !err; m->nr_snaps_done++) {
		const struct rec__module_snap *snap = snap_at(m->nr_snaps_done);
		const struct rec__module_known *k;
		struct rec__module_key key;

		key.bias = snap->bias;
		key.first_start = snap->ranges[0].start;
		key.path_hash = snap->path_hash;
		if (m->nr_snaps_done == m->cap_snap_ids) {
			uint32_t cap = m->cap_snap_ids ? 2 * m->cap_snap_ids : 32;
			uint32_t *ids = realloc(m->snap_ids, cap * sizeof(*ids));

			if (!ids) {
				err = -ENOMEM;
				break;
			}
			m->snap_ids = ids;
			m->cap_snap_ids = cap;
		}
		k = find_known(m, &key);
		if (k) {
			m->snap_ids[m->nr_snaps_done] = k->id;
			continue;
		}
		/* Mapped since some time before its first site, not known when;
		 * no check saw it (seen 0): the next full one that misses it
		 * says it is gone. */
		err = recfmt_encode_module_since(out, m->nr_known + 1, 0, snap->bias, snap->ranges,
						 snap->nr_ranges, snap->build_id,
						 snap->build_id_bytes,
						 abs_path(snap->path, snap->ranges[0].start), 0);
		if (!err)
			err = add_known(m, &key, m->nr_known + 1, 0);
		m->snap_ids[m->nr_snaps_done] = err ? 0 : m->nr_known;
	}
	pthread_mutex_unlock(&scan_lock);
	return err;
}

/*
 * The module epoch: bumped by librectrace.so's dlclose() after the loader
 * unmapped a module (below), so that a function site found at an address
 * before is checked again against the module mapped there now (site.c;
 * finding F16). Stays 0 in the static library, which has no dlclose().
 */
static uint32_t mod_epoch;

uint32_t rec__modules_epoch(void)
{
	return __atomic_load_n(&mod_epoch, __ATOMIC_ACQUIRE);
}

/*
 * rec__modules_snap_id() - the id of the MODULE record of snapshot `snap`
 * (index + 1, as rec__site_func_snap() gives it) in m's file, for a FUNC
 * record (FORMAT.md §3.11); 0 if it has none (no snapshot, or not added).
 * Writer thread only, after rec__modules_add_snaps().
 */
uint32_t rec__modules_snap_id(const struct rec__modules *m, uint32_t snap)
{
	return snap && snap <= m->nr_snaps_done ? m->snap_ids[snap - 1] : 0;
}

/* Under scan_lock: one check of m, its records appended to out. */
static int check_locked(struct rec__modules *m, struct recfmt_buf *out)
{
	struct scan s = { .m = m, .out = out, .vdso = getauxval(AT_SYSINFO_EHDR), .first = true };

	dl_iterate_phdr(on_module, &s);
	if (s.first)
		return 0; /* no module at all: nothing to say */
	for (uint32_t i = 0; i < m->nr_known && s.changed && !s.err; i++) {
		struct rec__module_known *k = &m->known[i];

		if (k->mapped && k->seen != m->gen) {
			struct recfmt_module_map mm = { k->id, RECFMT_MODULE_UNMAPPED, s.now_ticks };

			k->mapped = false;
			s.err = recfmt_encode_module_map(out, &mm);
		}
	}
	m->checked_ticks = s.now_ticks;
	return s.err;
}

/*
 * The files dlclose() checks (a stream file, flight mode's crash snapshot):
 * set without the lock (rec__modules_watch(), maybe in a signal handler),
 * cleared under it; read under it.
 */
#define NR_WATCHED 4
static struct rec__modules *watched[NR_WATCHED];

/*
 * rec__modules_watch() - dlclose() checks m from now on, as the writer does
 * (m is zeroed or checked already). Called as the recording starts, before
 * its first sample, so that a library closed before the writer's first
 * check is in the file; async-signal-safe (a start may be in a handler).
 */
void rec__modules_watch(struct rec__modules *m)
{
	for (int i = 0; i < NR_WATCHED; i++)
		if (__atomic_load_n(&watched[i], __ATOMIC_ACQUIRE) == m)
			return;
	for (int i = 0; i < NR_WATCHED; i++) {
		struct rec__modules *none = NULL;

		if (__atomic_compare_exchange_n(&watched[i], &none, m, false, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			return;
	}
}

int rec__modules_scan(struct rec__modules *m, struct recfmt_buf *out)
{
	int err = 0;

	rec__modules_watch(m);
	pthread_mutex_lock(&scan_lock);
	if (m->pending.len) {
		err = recfmt_buf_reserve(out, m->pending.len);
		if (!err) {
			memcpy(out->data + out->len, m->pending.data, m->pending.len);
			out->len += m->pending.len;
			m->pending.len = 0;
		}
	}
	if (!err)
		err = check_locked(m, out);
	pthread_mutex_unlock(&scan_lock);
	return err;
}

/*
 * A check of every watched file, its records left pending for the writer:
 * dlclose() below, before and after the real one, while stack samples are
 * recorded (their addresses are named by time: FORMAT.md §3.23). A file's
 * check that runs out of memory leaves the rest to the writer's next one.
 */
static __attribute__((unused)) void dlclose_check(void)
{
	if (!rec__sample_hz())
		return;
	pthread_mutex_lock(&scan_lock);
	for (int i = 0; i < NR_WATCHED; i++) {
		struct rec__modules *m = __atomic_load_n(&watched[i], __ATOMIC_ACQUIRE);

		if (m)
			check_locked(m, &m->pending);
	}
	pthread_mutex_unlock(&scan_lock);
}

#if defined(REC_GLIBC_HOOK_VERSION)
/*
 * dlclose() as the program calls it, in librectrace.so only, as sample.c's
 * pthread_create(): the dynamic linker matches the versioned reference by
 * the version's name and finds librec before libc. The static library
 * stands before no dlopen(): there only the writer's checks see modules come and go.
 */
#define REC__STR2(x) #x
#define REC__STR(x) REC__STR2(x)
int rec__dlclose_234(void *handle) __attribute__((visibility("default")));
int rec__dlclose_old(void *handle) __attribute__((visibility("default")));
__asm__(".symver rec__dlclose_234, dlclose@@GLIBC_2.34");
__asm__(".symver rec__dlclose_old, dlclose@" REC__STR(REC_GLIBC_HOOK_VERSION));

static int (*real_dlclose)(void *);

static int on_first_subs(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
		*(unsigned long long *)arg = info->dlpi_subs;
	return 1;
}

/* The loader's count of modules unmapped so far; ~0 where it keeps none. */
static unsigned long long loader_subs(void)
{
	unsigned long long subs = ~0ull;

	dl_iterate_phdr(on_first_subs, &subs);
	return subs;
}

static int hooked_dlclose(void *handle)
{
	int (*f)(void *) = __atomic_load_n(&real_dlclose, __ATOMIC_ACQUIRE);
	unsigned long long subs;
	int ret;

	if (!f) {
		f = (int (*)(void *))dlvsym(RTLD_NEXT, "dlclose", "GLIBC_2.34");
		if (!f)
			f = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
		if (!f)
			return -1;
		__atomic_store_n(&real_dlclose, f, __ATOMIC_RELEASE);
	}
	dlclose_check(); /* every module mapped now is in the file */
	subs = loader_subs();
	ret = f(handle);
	dlclose_check(); /* and those it unmapped are gone, with the time */
	/*
	 * A module unmapped (by this call, or by another thread's meanwhile):
	 * its addresses may be another library's from now on. Function sites
	 * are looked up again by module (site.c), and every thread's hooks'
	 * cache is cleared at its next hook (hooks.c; finding F16).
	 */
	if (subs == ~0ull || loader_subs() != subs) {
		__atomic_add_fetch(&mod_epoch, 1, __ATOMIC_SEQ_CST); /* before the marks */
		rec__thread_hooks_stale_all();
	}
	return ret;
}

int rec__dlclose_234(void *handle)
{
	return hooked_dlclose(handle);
}

int rec__dlclose_old(void *handle)
{
	return hooked_dlclose(handle);
}
#endif

void rec__modules_fork_prepare(void)
{
	pthread_mutex_lock(&scan_lock);
}

void rec__modules_fork_parent(void)
{
	pthread_mutex_unlock(&scan_lock);
}

/* The parent's files are not the child's (writer.c sets them aside). */
void rec__modules_fork_child(void)
{
	pthread_mutex_init(&scan_lock, NULL);
	for (int i = 0; i < NR_WATCHED; i++)
		__atomic_store_n(&watched[i], NULL, __ATOMIC_RELAXED);
}

void rec__modules_fini(struct rec__modules *m)
{
	pthread_mutex_lock(&scan_lock);
	for (int i = 0; i < NR_WATCHED; i++)
		if (__atomic_load_n(&watched[i], __ATOMIC_RELAXED) == m)
			__atomic_store_n(&watched[i], NULL, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&scan_lock);
	free(m->known);
	free(m->snap_ids);
	recfmt_buf_fini(&m->pending);
	memset(m, 0, sizeof(*m));
}

/* ---------------------------------------------------------------------
 * Function addresses by symbol name, for REC_TRIGGER on hook-traced
 * functions (flight.c). librec has no ELF library (libelf is tracetool's
 * only): this small reader needs only what the loader already proved
 * sound, the native class and byte order of a file it mapped, and checks
 * every offset and size against the file before use.
 */
struct loaded {
	char *path;
	uintptr_t bias;
};

struct collect {
	struct loaded *v;
	uint32_t nr, cap;
	uintptr_t vdso;
	bool first;
	int err;
};

static int on_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct collect *c = arg;
	char exe[4096];
	const char *path = info->dlpi_name ? info->dlpi_name : "";

	(void)size;
	if (c->first) {
		ssize_t n;

		c->first = false;
		if (!path[0]) {
			n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
			exe[n > 0 ? n : 0] = '\0';
			path = exe;
		}
	}
	if (!path[0] || is_vdso(c->vdso, info))
		return 0;
	if (c->nr == c->cap) {
		uint32_t cap = c->cap ? 2 * c->cap : 16;
		struct loaded *v = realloc(c->v, cap * sizeof(*v));

		if (!v) {
			c->err = -ENOMEM;
			return 1;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->nr].path = strdup(path);
	if (!c->v[c->nr].path) {
		c->err = -ENOMEM;
		return 1;
	}
	c->v[c->nr++].bias = info->dlpi_addr;
	return 0;
}

/* A section's bytes, if they lie inside the file. */
static const void *section_at(const uint8_t *file, size_t size, const ElfW(Shdr) *sh)
{
	if (sh->sh_type == SHT_NOBITS || sh->sh_offset > size || sh->sh_size > size - sh->sh_offset)
		return NULL;
	return file + sh->sh_offset;
}

/*
 * The function symbols of one mapped file named in names[]: found(i,
 * bias + value) for each. Return: 1 if it has a .symtab, 0 if only a
 * .dynsym (or no symbols), -1 if it is not a readable ELF file.
 */
static int file_funcs(const uint8_t *file, size_t size, uintptr_t bias, const char *const *names,
		      uint32_t nr_names, void (*found)(uint32_t i, uintptr_t addr, void *arg),
		      void *arg)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)(const void *)file;
	const ElfW(Shdr) *sh;
	uint32_t want = SHT_SYMTAB;
	int has_symtab = 0;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff > size ||
	    (size_t)eh->e_shnum > (size - eh->e_shoff) / sizeof(ElfW(Shdr)) ||
	    eh->e_shoff % _Alignof(ElfW(Shdr)) != 0)
		return -1;
	sh = (const ElfW(Shdr) *)(const void *)(file + eh->e_shoff);
	for (int k = 0; k < eh->e_shnum; k++)
		if (sh[k].sh_type == SHT_SYMTAB)
			has_symtab = 1;
	if (!has_symtab)
		want = SHT_DYNSYM;
	for (int k = 0; k < eh->e_shnum; k++) {
		const ElfW(Sym) *sym;
		const char *str;
		size_t nsym, str_size;

		if (sh[k].sh_type != want || sh[k].sh_link >= eh->e_shnum ||
		    sh[k].sh_entsize != sizeof(ElfW(Sym)) || sh[k].sh_offset % _Alignof(ElfW(Sym)))
			continue;
		sym = section_at(file, size, &sh[k]);
		str = section_at(file, size, &sh[sh[k].sh_link]);
		if (!sym || !str)
			continue;
		nsym = sh[k].sh_size / sizeof(ElfW(Sym));
		str_size = sh[sh[k].sh_link].sh_size;
		for (size_t j = 0; j < nsym; j++) {
			if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC || sym[j].st_shndx == SHN_UNDEF ||
			    !sym[j].st_value || sym[j].st_name >= str_size)
				continue;
			for (uint32_t i = 0; i < nr_names; i++) {
				size_t n = strlen(names[i]);

				if (str_size - sym[j].st_name > n && str[sym[j].st_name + n] == '\0' &&
				    memcmp(str + sym[j].st_name, names[i], n) == 0)
					found(i, bias + (uintptr_t)sym[j].st_value, arg);
			}
		}
	}
	return has_symtab;
}

/*
 * rec__modules_find_funcs() - the addresses of the functions named
 * names[0..nr_names) in every loaded object's symbol table (.symtab, or
 * .dynsym where it was stripped), as -finstrument-functions passes them to
 * the hooks: found(i, address) for each (a static function may have
 * several). Writer thread only (it reads files). *main_stripped: the
 * program's own file has no .symtab (its static functions and those not
 * exported cannot be found).
 * Return: 0, or -ENOMEM.
 */
int rec__modules_find_funcs(const char *const *names, uint32_t nr_names,
			    void (*found)(uint32_t i, uintptr_t addr, void *arg), void *arg,
			    bool *main_stripped)
{
	struct collect c = { .vdso = getauxval(AT_SYSINFO_EHDR), .first = true };

	*main_stripped = false;
	pthread_mutex_lock(&scan_lock);
	dl_iterate_phdr(on_loaded, &c);
	pthread_mutex_unlock(&scan_lock);
	for (uint32_t k = 0; k < c.nr; k++) {
		int fd = c.err ? -1 : open(c.v[k].path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		struct stat st;

		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
			void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

			if (map != MAP_FAILED) {
				if (file_funcs(map, (size_t)st.st_size, c.v[k].bias, names, nr_names,
					       found, arg) == 0 && k == 0)
					*main_stripped = true;
				munmap(map, (size_t)st.st_size);
			}
		}
		if (fd >= 0)
			close(fd);
		free(c.v[k].path);
	}
	free(c.v);
	return c.err;
}
