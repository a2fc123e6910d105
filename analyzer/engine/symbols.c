/* SPDX-License-Identifier: MIT */
/*
 * symbols.c - names function addresses from the ELF files of the modules a
 * trace recorded (see symbols.h). Each module's file is opened at most once,
 * when the first address in it is named: its build-id (NT_GNU_BUILD_ID note)
 * must equal the recorded one, then its function symbols (.symtab if the file
 * has one, so static functions are named too, else .dynsym) are sorted by
 * address. Addresses map to the file through the recorded load bias, which
 * covers PIE executables and shared libraries as well as fixed-address
 * executables (bias 0). Implements the reader's side of FORMAT.md §3.10-§3.11.
 */
#include "engine/symbols.h"
#include "common/emit.h"
#include "common/hmap.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* libstdc++'s demangler (tracetool links libstdc++ for it: README). */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *length, int *status);

enum module_state {
	MOD_UNREAD = 0,
	MOD_OK,
	MOD_MISSING,  /* cannot open the file */
	MOD_NOT_ELF,  /* not an ELF file, or unreadable symbol tables */
	MOD_MISMATCH, /* build-id differs: the file changed since the recording */
	MOD_VDSO,     /* the kernel's vDSO: no file */
	MOD_NO_PATH,
};

struct symbol {
	uint64_t addr, size;
	char *name; /* demangled */
	const char *file; /* a local symbol's source file (the STT_FILE before
			   * it in .symtab), owned by the module; NULL if global */
	bool global;	  /* STB_GLOBAL or STB_WEAK */
};

/* A time a module was mapped: [lo, hi), on the events' clock. */
struct span {
	uint64_t lo, hi;
};

struct module {
	uint32_t id, flags;
	uint64_t bias;
	/* FORMAT.md §3.25: when it was mapped, if the file says (timed). */
	bool timed;
	struct span *spans;
	uint32_t nr_spans, cap_spans;
	uint32_t nr_ranges;
	struct recfmt_range *ranges;
	uint8_t build_id[RECFMT_MAX_BUILD_ID_BYTES];
	uint32_t build_id_bytes;
	char *path;
	char **files; /* STT_FILE names of the local symbols (struct symbol.file) */
	uint32_t nr_files;
	char *shown; /* path as messages show it (emit.c's sanitizer) */
	const char *base; /* basename of path */
	enum module_state state;
	uint64_t offset;  /* file offset of the first range (has_offset) */
	bool has_offset;
	char *warnings; /* lines for stderr, printed by tt_symbols_warn() */
	struct symbol *syms;
	size_t nr_syms;
};

struct func {
	uint32_t id;
	uint32_t module; /* its MODULE's id (1.5), 0: by address */
	uint64_t addr;
};

struct tt_symbols {
	const char *trace_path;
	struct module *mods;
	uint32_t nr_mods, cap_mods;
	struct func *funcs;	   /* in order of definition */
	uint32_t nr_funcs, cap_funcs;
	struct tt_hmap func_map; /* hmap.h: funcs by id (the file's: keyed) */
};

struct tt_symbols *tt_symbols_create(const char *trace_path)
{
	struct tt_symbols *s = tt_xcalloc(1, sizeof(*s));

	s->trace_path = trace_path;
	return s;
}

static void module_fini(struct module *m)
{
	for (size_t i = 0; i < m->nr_syms; i++)
		free(m->syms[i].name);
	free(m->syms);
	for (uint32_t i = 0; i < m->nr_files; i++)
		free(m->files[i]);
	free(m->files);
	free(m->ranges);
	free(m->spans);
	free(m->path);
	free(m->shown);
	free(m->warnings);
}

void tt_symbols_destroy(struct tt_symbols *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nr_mods; i++)
		module_fini(&s->mods[i]);
	free(s->mods);
	free(s->funcs);
	tt_hmap_fini(&s->func_map);
	free(s);
}

/* A new time m is mapped, from lo on. */
static void add_span(struct module *m, uint64_t lo)
{
	if (m->nr_spans == m->cap_spans) {
		m->cap_spans = m->cap_spans ? 2 * m->cap_spans : 2;
		m->spans = tt_xrealloc(m->spans, m->cap_spans * sizeof(*m->spans));
	}
	m->spans[m->nr_spans++] = (struct span){ lo, UINT64_MAX };
}

void tt_symbols_add_module(struct tt_symbols *s, const struct recfmt_module *rm)
{
	struct module *m = NULL;
	const char *slash;

	for (uint32_t i = 0; i < s->nr_mods; i++) {
		if (s->mods[i].id == rm->id) {
			/* Recorded again (a second walk, or a restart): the later one. */
			m = &s->mods[i];
			module_fini(m);
			break;
		}
	}
	if (!m) {
		if (s->nr_mods == s->cap_mods) {
			s->cap_mods = s->cap_mods ? 2 * s->cap_mods : 16;
			s->mods = tt_xrealloc(s->mods, s->cap_mods * sizeof(*s->mods));
		}
		m = &s->mods[s->nr_mods++];
	}
	memset(m, 0, sizeof(*m));
	m->id = rm->id;
	m->flags = rm->flags;
	m->bias = rm->load_bias;
	m->nr_ranges = rm->nr_ranges;
	m->ranges = tt_xcalloc(rm->nr_ranges, sizeof(*m->ranges));
	for (uint32_t i = 0; i < rm->nr_ranges; i++)
		m->ranges[i] = recfmt_module_range(rm, i);
	m->build_id_bytes = rm->build_id_bytes;
	memcpy(m->build_id, rm->build_id, rm->build_id_bytes);
	m->path = tt_xstrndup(rm->path, rm->path_bytes);
	for (size_t i = 0; i < rm->path_bytes; i++)
		if (!m->path[i])
			m->path[i] = '?';
	m->shown = tt_emit_clean(m->path, strlen(m->path));
	slash = strrchr(m->path, '/');
	m->base = slash ? slash + 1 : m->path;
	if (m->flags & RECFMT_MODULE_VDSO)
		m->state = MOD_VDSO;
	else if (!m->path[0])
		m->state = MOD_NO_PATH;
	if (rm->has_since) {
		m->timed = true;
		add_span(m, rm->since_ticks);
	}
}

void tt_symbols_module_map(struct tt_symbols *s, const struct recfmt_module_map *mm)
{
	struct module *m = NULL;

	for (uint32_t i = s->nr_mods; i-- > 0;) {
		if (s->mods[i].id == mm->id) {
			m = &s->mods[i];
			break;
		}
	}
	if (!m)
		return; /* its MODULE was lost with its frame */
	if (!m->timed) {
		/* A 1.3-style MODULE: mapped from the start until now. */
		m->timed = true;
		add_span(m, 0);
	}
	if (mm->what == RECFMT_MODULE_UNMAPPED) {
		if (m->nr_spans && m->spans[m->nr_spans - 1].hi == UINT64_MAX)
			m->spans[m->nr_spans - 1].hi = mm->ticks;
	} else if (!m->nr_spans || m->spans[m->nr_spans - 1].hi != UINT64_MAX) {
		add_span(m, mm->ticks);
	}
}

struct func_key {
	const struct tt_symbols *s;
	uint32_t id;
};

static bool func_eq(const void *ctx, uint32_t k)
{
	const struct func_key *key = ctx;

	return key->s->funcs[k].id == key->id;
}

static uint32_t func_find(const struct tt_symbols *s, uint32_t id)
{
	const struct func_key key = { s, id };

	return tt_hmap_find(&s->func_map, tt_hash_u64(id), func_eq, &key);
}

void tt_symbols_add_func(struct tt_symbols *s, uint32_t id, uint64_t addr, uint32_t module)
{
	uint32_t k;

	if (!id)
		return; /* not a site id (FORMAT.md §3.11: 1 … 2^31 - 1): never found */
	k = func_find(s, id);
	if (k != TT_HMAP_NONE) {
		s->funcs[k].addr = addr;
		s->funcs[k].module = module;
		return;
	}
	if (s->nr_funcs == s->cap_funcs) {
		s->cap_funcs = s->cap_funcs ? 2 * s->cap_funcs : 64;
		s->funcs = tt_xrealloc(s->funcs, s->cap_funcs * sizeof(*s->funcs));
	}
	tt_hmap_put(&s->func_map, tt_hash_u64(id), s->nr_funcs);
	s->funcs[s->nr_funcs].id = id;
	s->funcs[s->nr_funcs].module = module;
	s->funcs[s->nr_funcs++].addr = addr;
}

bool tt_symbols_func_addr(const struct tt_symbols *s, uint32_t id, uint64_t *addr)
{
	uint32_t k = s ? func_find(s, id) : TT_HMAP_NONE;

	if (k == TT_HMAP_NONE)
		return false;
	*addr = s->funcs[k].addr;
	return true;
}

static void hex(const uint8_t *p, uint32_t n, char *out, size_t out_bytes)
{
	size_t k = 0;

	out[0] = '\0';
	for (uint32_t i = 0; i < n && k + 3 <= out_bytes; i++, k += 2)
		snprintf(out + k, out_bytes - k, "%02x", p[i]);
}

/* The NT_GNU_BUILD_ID note of an ELF file. Return: its length, 0 if none. */
static size_t file_build_id(Elf *elf, uint8_t *out, size_t out_bytes)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off, next;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4) == 0) {
				size_t n = nh.n_descsz < out_bytes ? nh.n_descsz : out_bytes;

				memcpy(out, (const char *)data->d_buf + desc_off, n);
				return n;
			}
			off = next;
		}
	}
	return 0;
}

static char *demangle(const char *name)
{
	if (name[0] == '_' && name[1] == 'Z') {
		int status = -1;
		char *d = __cxa_demangle(name, NULL, NULL, &status);

		if (d && status == 0)
			return d;
		free(d);
	}
	return tt_xstrndup(name, strlen(name));
}

static int by_addr(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Same address (aliases): the sized one first, then by name, so the
	 * choice does not depend on the order of the symbol table. */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Reads the function symbols of one symbol table section. */
static void read_symtab(struct module *m, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	m->syms = tt_xrealloc(m->syms, (m->nr_syms + n) * sizeof(*m->syms));
	const char *file = NULL; /* the STT_FILE the local symbols that follow belong to */
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_FILE) {
			/* ELF: the local symbols of one source file follow its STT_FILE. */
			name = elf_strptr(elf, sh->sh_link, sym.st_name);
			file = NULL;
			if (name && name[0]) {
				m->files = tt_xrealloc(m->files, (m->nr_files + 1) * sizeof(*m->files));
				m->files[m->nr_files] = tt_xstrndup(name, strlen(name));
				file = m->files[m->nr_files++];
			}
			continue;
		}
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		m->syms[m->nr_syms].addr = sym.st_value;
		m->syms[m->nr_syms].size = sym.st_size;
		m->syms[m->nr_syms].name = demangle(name);
		m->syms[m->nr_syms].file = GELF_ST_BIND(sym.st_info) == STB_LOCAL ? file : NULL;
		m->syms[m->nr_syms].global = GELF_ST_BIND(sym.st_info) != STB_LOCAL;
		m->nr_syms++;
	}
}

/*
 * Warnings wait in the module until the walk is over (tt_symbols_warn()):
 * with several walkers (events.c) each replica loads the modules its own
 * threads need, so printing at first use would print a module's warning
 * once per replica, in an order that depends on the threads' shares.
 */
static void queue_warning(struct module *m, const char *line)
{
	size_t old = m->warnings ? strlen(m->warnings) : 0, n = strlen(line);
	char *w = tt_xrealloc(m->warnings, old + n + 1);

	memcpy(w + old, line, n + 1);
	m->warnings = w;
}

static void warn(const struct tt_symbols *s, struct module *m, const char *what)
{
	char line[8192];

	snprintf(line, sizeof(line),
		 "tracetool: %s: warning: %s: %s; its functions are shown as addresses\n",
		 s->trace_path, m->shown, what);
	queue_warning(m, line);
}

/* A module recorded without a build-id cannot be checked: say so, once. */
static void warn_once_unchecked(const struct tt_symbols *s, struct module *m)
{
	char line[8192];

	snprintf(line, sizeof(line),
		 "tracetool: %s: warning: %s: no build-id recorded; its names are not checked "
		 "against changes to the file\n",
		 s->trace_path, m->shown);
	queue_warning(m, line);
}

const char *tt_symbols_program(const struct tt_symbols *s)
{
	for (uint32_t i = 0; s && i < s->nr_mods; i++)
		if ((s->mods[i].flags & RECFMT_MODULE_MAIN) && s->mods[i].path[0])
			return s->mods[i].shown;
	return NULL;
}

void tt_symbols_merge_warnings(struct tt_symbols *dst, const struct tt_symbols *src)
{
	if (!dst || !src)
		return;
	for (uint32_t i = 0; i < src->nr_mods; i++) {
		const struct module *sm = &src->mods[i];

		if (!sm->warnings)
			continue;
		/* Replicas read the same MODULE records: the same ids, paths,
		 * files, so the same warnings; keep one copy. */
		for (uint32_t j = 0; j < dst->nr_mods; j++) {
			struct module *dm = &dst->mods[j];

			if (dm->id == sm->id && !dm->warnings) {
				queue_warning(dm, sm->warnings);
				break;
			}
		}
	}
}

/*
 * The warning lines this command printed. A command that names both scopes
 * and stack samples (chrome, perfetto, export) reads each file's modules
 * twice, in two symbol tables: a module's warning is still one line
 * (README, whole-program mode; F24, check4). A hash set, since a file can
 * name any number of missing modules, and reset by tt_symbols_warn_reset()
 * where one process runs several commands (the fuzz targets).
 */
static struct {
	pthread_mutex_t lock;
	struct tt_hmap map;
	char **lines;
	size_t *len;
	uint32_t nr, cap;
} warned = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct warned_key {
	const char *line;
	size_t n;
};

static bool warned_eq(const void *ctx, uint32_t id)
{
	const struct warned_key *k = ctx;

	return warned.len[id] == k->n && !memcmp(warned.lines[id], k->line, k->n);
}

/* Whether line (n bytes) was printed before, remembering it if not. */
static bool printed_before(const char *line, size_t n)
{
	struct warned_key k = { line, n };
	uint32_t h = tt_hash_bytes(line, n);
	bool found;

	pthread_mutex_lock(&warned.lock);
	found = tt_hmap_find(&warned.map, h, warned_eq, &k) != TT_HMAP_NONE;
	if (!found) {
		if (warned.nr == warned.cap) {
			warned.cap = warned.cap ? 2 * warned.cap : 16;
			warned.lines = tt_xrealloc(warned.lines, warned.cap * sizeof(*warned.lines));
			warned.len = tt_xrealloc(warned.len, warned.cap * sizeof(*warned.len));
		}
		warned.lines[warned.nr] = tt_xcalloc(n + 1, 1);
		memcpy(warned.lines[warned.nr], line, n);
		warned.len[warned.nr] = n;
		tt_hmap_put(&warned.map, h, warned.nr++);
	}
	pthread_mutex_unlock(&warned.lock);
	return found;
}

void tt_symbols_warn_reset(void)
{
	pthread_mutex_lock(&warned.lock);
	for (uint32_t i = 0; i < warned.nr; i++)
		free(warned.lines[i]);
	free(warned.lines);
	free(warned.len);
	tt_hmap_fini(&warned.map);
	warned.lines = NULL;
	warned.len = NULL;
	warned.nr = warned.cap = 0;
	pthread_mutex_unlock(&warned.lock);
}

void tt_symbols_warn(struct tt_symbols *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nr_mods; i++) {
		for (const char *l = s->mods[i].warnings; l && *l;) {
			size_t n = strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n');

			if (!printed_before(l, n))
				fwrite(l, 1, n, stderr);
			l += n;
		}
		free(s->mods[i].warnings);
		s->mods[i].warnings = NULL;
	}
}

/* elf_version() sets libelf's global state: once per process, since
 * walker threads may load modules at the same time. */
static void elf_init(void)
{
	elf_version(EV_CURRENT);
}

static void elf_init_once(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, elf_init);
}

/*
 * Opens a path a trace names only if it is a regular file: stat() first,
 * since opening a device can itself have effects (a tape rewinds, a tty
 * becomes the controlling one), then O_NONBLOCK (a FIFO put there since
 * never blocks) and fstat() on what was opened.
 * Return: an fd, or -1 with errno (EINVAL: not a regular file).
 */
static int open_regular(const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/*
 * TRACETOOL_SYMBOL_PATH (colon-separated directories): where to look for a
 * module whose recorded path is missing or holds another build, by its file
 * name. A candidate is used only if its build-id is the recorded one.
 * Return: an open fd of a matching file, or -1.
 */
static int find_moved(const struct module *m, char *found, size_t found_bytes)
{
	const char *dirs = getenv("TRACETOOL_SYMBOL_PATH");

	if (!dirs || !m->build_id_bytes)
		return -1;
	while (*dirs) {
		size_t n = strcspn(dirs, ":");
		uint8_t id[RECFMT_MAX_BUILD_ID_BYTES];
		Elf *elf;
		int fd;

		snprintf(found, found_bytes, "%.*s/%s", (int)n, dirs, m->base);
		dirs += n + (dirs[n] == ':');
		fd = n ? open_regular(found) : -1;
		if (fd < 0)
			continue;
		elf_init_once();
		elf = elf_begin(fd, ELF_C_READ, NULL);
		if (elf && elf_kind(elf) == ELF_K_ELF &&
		    file_build_id(elf, id, sizeof(id)) == m->build_id_bytes &&
		    memcmp(id, m->build_id, m->build_id_bytes) == 0) {
			elf_end(elf);
			return fd;
		}
		if (elf)
			elf_end(elf);
		close(fd);
	}
	return -1;
}

/* Opens the module's file once: checks its build-id, reads its symbols. */
/*
 * The .symtab of DIR/.build-id/NN/REST.debug, the detached debug file of
 * elf's build-id (its symbols have the file's addresses), when there is one
 * of that build-id; DIR is $TRACETOOL_DEBUG_DIR, else /usr/lib/debug.
 * Return: whether it was read.
 */
static bool read_debug_symtab(struct module *m, Elf *elf)
{
	uint8_t id[RECFMT_MAX_BUILD_ID_BYTES], did[RECFMT_MAX_BUILD_ID_BYTES];
	size_t n = file_build_id(elf, id, sizeof(id)), dn;
	char hexid[2 * RECFMT_MAX_BUILD_ID_BYTES + 1], path[4096 + sizeof(hexid)];
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *d;
	int fd;

	if (n < 2)
		return false;
	const char *root = getenv("TRACETOOL_DEBUG_DIR");

	if (!root || !*root)
		root = "/usr/lib/debug";
	hex(id, (uint32_t)n, hexid, sizeof(hexid));
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root, hexid, hexid + 2);
	fd = open_regular(path);
	if (fd < 0)
		return false;
	d = elf_begin(fd, ELF_C_READ, NULL);
	if (d && elf_kind(d) == ELF_K_ELF) {
		dn = file_build_id(d, did, sizeof(did));
		while (dn == n && !memcmp(id, did, n) && (scn = elf_nextscn(d, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
				read_symtab(m, d, scn, &sh);
				found = true;
			}
		}
	}
	if (d)
		elf_end(d);
	close(fd);
	return found;
}

/* The file offset of the module's lowest range, from the PT_LOAD segment
 * that holds its file address (librec records a segment's p_vaddr + bias). */
static void exec_offset(struct module *m, Elf *elf)
{
	uint64_t lo = UINT64_MAX;
	size_t n;

	for (uint32_t r = 0; r < m->nr_ranges; r++)
		if (m->ranges[r].start < lo)
			lo = m->ranges[r].start;
	if (lo == UINT64_MAX || elf_getphdrnum(elf, &n) != 0)
		return;
	lo -= m->bias;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && lo >= ph.p_vaddr &&
		    lo - ph.p_vaddr < ph.p_memsz) {
			m->offset = ph.p_offset + (lo - ph.p_vaddr);
			m->has_offset = true;
			return;
		}
	}
}

static void module_load(struct tt_symbols *s, struct module *m)
{
	Elf *elf = NULL;
	Elf_Scn *scn = NULL, *dynsym = NULL;
	GElf_Shdr dynsym_sh;
	bool have_symtab = false;
	uint8_t id[RECFMT_MAX_BUILD_ID_BYTES];
	size_t id_bytes;
	char what[512], want[2 * RECFMT_MAX_BUILD_ID_BYTES + 1], got[sizeof(want)];
	char moved[4096 + 256];
	struct stat st;
	int fd;

	m->state = MOD_MISSING;
	/* A path in a trace may name a FIFO or a device: never open one. */
	fd = open_regular(m->path);
	if (fd < 0) {
		int err = errno;

		fd = find_moved(m, moved, sizeof(moved));
		if (fd < 0) {
			if (err == EINVAL)
				snprintf(what, sizeof(what), "not a regular file");
			else
				snprintf(what, sizeof(what), "cannot open: %s", strerror(err));
			warn(s, m, what);
			return;
		}
	}
	m->state = MOD_NOT_ELF;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		warn(s, m, "not a regular file");
		close(fd);
		return;
	}
	elf_init_once();
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		warn(s, m, "not an ELF file");
		goto out;
	}
	id_bytes = file_build_id(elf, id, sizeof(id));
	if (m->build_id_bytes &&
	    (id_bytes != m->build_id_bytes || memcmp(id, m->build_id, id_bytes) != 0)) {
		int moved_fd = find_moved(m, moved, sizeof(moved));

		if (moved_fd >= 0) { /* the right build, elsewhere: read that one */
			elf_end(elf);
			close(fd);
			fd = moved_fd;
			elf = elf_begin(fd, ELF_C_READ, NULL);
			goto symbols;
		}
		m->state = MOD_MISMATCH;
		hex(m->build_id, m->build_id_bytes, want, sizeof(want));
		hex(id, (uint32_t)id_bytes, got, sizeof(got));
		snprintf(what, sizeof(what),
			 "build-id mismatch (recorded %s, file has %s): the file changed since "
			 "the recording",
			 want, id_bytes ? got : "none");
		warn(s, m, what);
		goto out;
	}
	if (!m->build_id_bytes)
		warn_once_unchecked(s, m);
symbols:
	if (!elf) {
		warn(s, m, "not an ELF file");
		goto out;
	}
	exec_offset(m, elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			read_symtab(m, elf, scn, &sh);
			have_symtab = true;
		} else if (sh.sh_type == SHT_DYNSYM) {
			dynsym = scn;
			dynsym_sh = sh;
		}
	}
	/* A stripped file (Debian's libraries): its full symbol table from the
	 * detached debug file of the same build-id, as perf and gdb find it
	 * (libc6-dbg, *-dbgsym packages). */
	if (!have_symtab)
		have_symtab = read_debug_symtab(m, elf);
	if (!have_symtab && dynsym)
		read_symtab(m, elf, dynsym, &dynsym_sh);
	qsort(m->syms, m->nr_syms, sizeof(*m->syms), by_addr);
	m->state = MOD_OK;
out:
	if (elf)
		elf_end(elf);
	close(fd);
}

/* The symbol at file address a: the one it starts at, else one that holds it. */
static const struct symbol *lookup(const struct module *m, uint64_t a)
{
	size_t lo = 0, hi = m->nr_syms;

	while (lo < hi) { /* first symbol with addr > a */
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct symbol *sym = &m->syms[lo - 1], *last = sym;
	/* Among aliases at that address, the first sorted (sized, by name)... */
	while (sym > m->syms && sym[-1].addr == sym->addr)
		sym--;
	/* ...the public name if there is one, as perf chooses: global before
	 * local, a symbol's default version (name@@VERSION) before another,
	 * a name without a leading '_' before one with (glibc's
	 * pthread_mutex_lock@@GLIBC_2.2.5, not __GI___pthread_mutex_lock). */
	const struct symbol *best = sym;
	int best_score = -1;
	for (const struct symbol *g = sym; g <= last; g++) {
		int score = g->size != sym->size ? -1
			    : 4 * g->global + 2 * (strstr(g->name, "@@") != NULL) + (g->name[0] != '_');

		if (score > best_score) {
			best = g;
			best_score = score;
		}
	}
	sym = best;
	if (sym->addr == a || a - sym->addr < sym->size)
		return sym;
	return NULL;
}

static bool holds(const struct module *m, uint64_t addr)
{
	for (uint32_t r = 0; r < m->nr_ranges; r++)
		if (addr >= m->ranges[r].start && addr < m->ranges[r].end)
			return true;
	return false;
}

static bool mapped_at(const struct module *m, uint64_t ticks)
{
	if (!m->timed)
		return true;
	for (uint32_t i = m->nr_spans; i-- > 0;)
		if (ticks >= m->spans[i].lo && ticks < m->spans[i].hi)
			return true;
	return false;
}

/* Latest first: a module loaded where an unloaded one was wins. */
static struct module *find_module(struct tt_symbols *s, uint64_t addr)
{
	for (uint32_t i = s->nr_mods; i-- > 0;)
		if (holds(&s->mods[i], addr))
			return &s->mods[i];
	return NULL;
}

uint32_t tt_symbols_find(struct tt_symbols *s, uint64_t addr, uint64_t ticks)
{
	uint32_t any = 0;

	for (uint32_t i = s->nr_mods; i-- > 0;) {
		if (!holds(&s->mods[i], addr))
			continue;
		if (mapped_at(&s->mods[i], ticks))
			return i + 1;
		if (!any)
			any = i + 1;
	}
	/* None mapped then by the file's times (a clock that disagrees by a
	 * hair): the latest that holds it, as a 1.3 reader would. */
	return any;
}

bool tt_symbols_mapped_at(const struct tt_symbols *s, uint32_t mod, uint64_t ticks)
{
	return mod && mod <= s->nr_mods && mapped_at(&s->mods[mod - 1], ticks);
}

static struct module *module_at(struct tt_symbols *s, uint32_t mod)
{
	return mod && mod <= s->nr_mods ? &s->mods[mod - 1] : NULL;
}

static uint32_t index_of(const struct tt_symbols *s, const struct module *m)
{
	return m ? (uint32_t)(m - s->mods) + 1 : 0;
}

void tt_symbols_name(struct tt_symbols *s, uint64_t addr, char *out, size_t out_bytes,
		     char *loc, size_t loc_bytes)
{
	tt_symbols_name_in(s, index_of(s, find_module(s, addr)), addr, out, out_bytes, loc,
			   loc_bytes);
}

void tt_symbols_name_in(struct tt_symbols *s, uint32_t mod, uint64_t addr, char *out,
			size_t out_bytes, char *loc, size_t loc_bytes)
{
	struct module *m = module_at(s, mod);
	const struct symbol *sym;
	const char *why;
	uint64_t a;

	loc[0] = '\0';
	if (!m) {
		snprintf(out, out_bytes, "0x%" PRIx64 " [no module]", addr);
		return;
	}
	if (m->state == MOD_UNREAD)
		module_load(s, m);
	a = addr - m->bias;
	switch (m->state) {
	case MOD_OK:
		sym = lookup(m, a);
		if (sym) {
			snprintf(out, out_bytes, "%s", sym->name);
			/* Where the function is, to tell same-named functions apart
			 * (docs/ANALYZER.md, "Names"): a static's source file, else
			 * the module. */
			snprintf(loc, loc_bytes, "%s", sym->file ? sym->file : m->base);
			return;
		}
		why = "no symbol";
		break;
	case MOD_MISSING: why = "missing"; break;
	case MOD_NOT_ELF: why = "not ELF"; break;
	case MOD_MISMATCH: why = "build-id mismatch"; break;
	case MOD_VDSO: snprintf(out, out_bytes, "0x%" PRIx64 " [vdso]", a); return;
	default: why = "no path"; break;
	}
	snprintf(out, out_bytes, "0x%" PRIx64 " [%s: %s]", a, m->base[0] ? m->base : "?", why);
}

bool tt_symbols_func_name(struct tt_symbols *s, uint32_t id, char *out, size_t out_bytes,
			  char *loc, size_t loc_bytes)
{
	uint32_t k = s ? func_find(s, id) : TT_HMAP_NONE, mod = 0;
	const struct func *f;

	if (k == TT_HMAP_NONE)
		return false;
	f = &s->funcs[k];
	if (!f->module) {
		tt_symbols_name(s, f->addr, out, out_bytes, loc, loc_bytes);
		return true;
	}
	/* FORMAT.md §3.11: the MODULE it names (the later one of an id
	 * recorded again), whatever was mapped at addr before or after. */
	for (uint32_t i = s->nr_mods; i-- > 0 && !mod;)
		if (s->mods[i].id == f->module && holds(&s->mods[i], f->addr))
			mod = i + 1;
	tt_symbols_name_in(s, mod, f->addr, out, out_bytes, loc, loc_bytes);
	return true;
}

bool tt_symbols_mapping(struct tt_symbols *s, uint64_t addr, struct tt_symbols_mapping *out)
{
	return tt_symbols_mapping_of(s, index_of(s, find_module(s, addr)), out);
}

bool tt_symbols_mapping_of(struct tt_symbols *s, uint32_t mod, struct tt_symbols_mapping *out)
{
	struct module *m = module_at(s, mod);

	memset(out, 0, sizeof(*out));
	if (!m)
		return false;
	if (m->state == MOD_UNREAD)
		module_load(s, m);
	out->id = m->id;
	out->start = UINT64_MAX;
	for (uint32_t r = 0; r < m->nr_ranges; r++) {
		if (m->ranges[r].start < out->start)
			out->start = m->ranges[r].start;
		if (m->ranges[r].end > out->limit)
			out->limit = m->ranges[r].end;
	}
	out->offset = m->has_offset ? m->offset : 0;
	out->has_offset = m->has_offset;
	out->path = m->path;
	out->build_id = m->build_id;
	out->build_id_bytes = m->build_id_bytes;
	out->has_functions = m->state == MOD_OK;
	out->vdso = m->state == MOD_VDSO;
	out->main = (m->flags & RECFMT_MODULE_MAIN) != 0;
	return true;
}

const char *tt_symbols_module(struct tt_symbols *s, uint64_t addr)
{
	return tt_symbols_module_of(s, index_of(s, find_module(s, addr)));
}

const char *tt_symbols_module_of(struct tt_symbols *s, uint32_t mod)
{
	const struct module *m = module_at(s, mod);

	return m && m->base ? m->base : "";
}
