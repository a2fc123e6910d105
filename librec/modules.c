/* SPDX-License-Identifier: MIT */
/*
 * modules.c - the loaded ELF modules, as the writer records them for the
 * analyzer to name function addresses (FORMAT.md §3.10): path, load bias,
 * executable ranges, build-id. The writer calls rec__modules_scan() before
 * it writes the FUNC records of a frame; it costs one dl_iterate_phdr()
 * callback when nothing was loaded or unloaded since the last scan (glibc's
 * dlpi_adds/dlpi_subs counters), so a library loaded with dlopen() is in the
 * file before, or in the same frame as, the first FUNC record that needs it:
 * its code ran, so it was loaded, before its site was registered. Runs on
 * the writer thread only; it does not know the file's bytes (format/ does).
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
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

struct scan {
	struct rec__modules *m;
	struct recfmt_buf *out;
	uintptr_t vdso;
	bool first;   /* the first callback: the main program */
	bool changed; /* dlpi_adds/subs differ from the last scan */
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

/* Adds key to the modules recorded in this file. Return: 0, or -ENOMEM. */
static int add_known(struct rec__modules *m, const struct rec__module_key *key)
{
	if (m->nr_known == m->cap_known) {
		uint32_t cap = m->cap_known ? 2 * m->cap_known : 32;
		struct rec__module_key *k = realloc(m->known, cap * sizeof(*k));

		if (!k)
			return -ENOMEM;
		m->known = k;
		m->cap_known = cap;
	}
	m->known[m->nr_known++] = *key;
	return 0;
}

static bool is_known(const struct rec__modules *m, const struct rec__module_key *key)
{
	for (uint32_t i = 0; i < m->nr_known; i++)
		if (memcmp(&m->known[i], key, sizeof(*key)) == 0)
			return true;
	return false;
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

static int on_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *s = arg;
	struct rec__modules *m = s->m;
	struct recfmt_range ranges[RECFMT_MAX_MODULE_RANGES];
	struct rec__module_key key;
	const uint8_t *build_id = NULL;
	uint32_t nr_ranges = 0, build_id_bytes, flags = 0;
	char exe[4096];
	const char *path = info->dlpi_name ? info->dlpi_name : "";

	if (s->first) {
		s->first = false;
		if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
			if (m->scanned && info->dlpi_adds == m->adds && info->dlpi_subs == m->subs)
				return 1; /* nothing loaded or unloaded: stop here */
			m->adds = info->dlpi_adds;
			m->subs = info->dlpi_subs;
		}
		m->scanned = true;
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
	memset(&key, 0, sizeof(key)); /* compared with memcmp, padding included */
	key.bias = info->dlpi_addr;
	key.first_start = ranges[0].start;
	key.path_hash = hash_str(path);
	if (is_known(m, &key))
		return 0;
	build_id_bytes = find_build_id(info, &build_id);
	s->err = recfmt_encode_module(s->out, m->nr_known + 1, flags, info->dlpi_addr, ranges,
				      nr_ranges, build_id, build_id_bytes, path);
	if (!s->err)
		s->err = add_known(m, &key);
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

	for (; m->nr_snaps_done < nr && !err; m->nr_snaps_done++) {
		const struct rec__module_snap *snap = snap_at(m->nr_snaps_done);
		struct rec__module_key key;

		memset(&key, 0, sizeof(key));
		key.bias = snap->bias;
		key.first_start = snap->ranges[0].start;
		key.path_hash = snap->path_hash;
		if (is_known(m, &key))
			continue;
		err = recfmt_encode_module(out, m->nr_known + 1, 0, snap->bias, snap->ranges,
					   snap->nr_ranges, snap->build_id, snap->build_id_bytes,
					   snap->path);
		if (!err)
			err = add_known(m, &key);
	}
	return err;
}

/*
 * rec__modules_scan() - append a MODULE record to out for every module
 * loaded since the last scan (all of them at the first scan of a file).
 * Writer thread only. Return: 0, or -ENOMEM.
 */
/*
 * Held by the writer across dl_iterate_phdr(), and by fork's prepare
 * handler (lifecycle.c) so that no scan is under way when the process
 * forks. glibc before 2.37 does not reset the loader's dl_load_write_lock
 * in a child (BZ #19282, fixed upstream in 2023): a fork while our writer
 * held it left the child's first scan, and so its exit, blocked forever.
 */
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;

int rec__modules_scan(struct rec__modules *m, struct recfmt_buf *out)
{
	struct scan s = { .m = m, .out = out, .vdso = getauxval(AT_SYSINFO_EHDR), .first = true };

	pthread_mutex_lock(&scan_lock);
	dl_iterate_phdr(on_module, &s);
	pthread_mutex_unlock(&scan_lock);
	return s.err;
}

void rec__modules_fork_prepare(void)
{
	pthread_mutex_lock(&scan_lock);
}

void rec__modules_fork_parent(void)
{
	pthread_mutex_unlock(&scan_lock);
}

void rec__modules_fork_child(void)
{
	pthread_mutex_init(&scan_lock, NULL);
}

void rec__modules_fini(struct rec__modules *m)
{
	free(m->known);
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
