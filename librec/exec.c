/* SPDX-License-Identifier: MIT */
/*
 * exec.c - the program exec()s (rec(3), EXIT, FORK AND CRASH, "Exec";
 * README, "One file, one live recording"). The kernel ends every thread and
 * closes the trace (O_CLOEXEC) at a successful exec: the events librec had
 * not written yet were lost and the file had no end. So librectrace.so
 * stands before the exec family (execve, execv, execvp, execvpe, execl,
 * execlp, execle, fexecve, execveat) and ends the recording first, as
 * rec_stop() does: every thread's events written, the end marker, the file
 * closed. The new program, traced too, then writes the next name
 * (lifecycle.c, open_output()): the ended file is never replaced.
 *
 * An exec that fails returns, and the program goes on: so the recording is
 * ended only for an exec that will most likely succeed (the file exists, is
 * a regular file and executable, found along PATH as execvp() would): a
 * program that tries its candidates one by one (Python's os.execvp() calls
 * execve() for each PATH entry) keeps one recording. An exec that fails all
 * the same (not an executable format, E2BIG, ENOMEM, ...) starts a new
 * recording at once, with the same configuration, in the next name, and one
 * stderr line says so (rec__exec_failed()). Finishing and going on is what
 * the file can say honestly: its end marker says every event up to the exec
 * is in it, and nothing after.
 *
 * The static librectrace.a stands before them too (REC_STATIC_EXEC: this
 * file built again, into its own object that librec/bundle_static.sh
 * links with the rest): there the copies are the plain names (execve,
 * ...), global, which the program's own calls bind to at its link (a
 * definition in the program comes before libc.so's), and a shared library's
 * calls too where the executable exports them; libc's own is looked up
 * with dlsym(RTLD_NEXT) as for librectrace.so. A program linked fully
 * static (-static) has nothing after librec's copy to look up, and librec
 * does not record there (its writer thread cannot be made): the exec is
 * then made as glibc makes it (static_exec below).
 *
 * Not stood before: posix_spawn() and system() (glibc calls its internal
 * execve in a new process: the recording goes on, the child is a new
 * process), a raw execve system call. A vfork() child shares the
 * recording's memory: its exec changes nothing (rec__exec_begin() checks
 * the pid).
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#if defined(REC_GLIBC_HOOK_VERSION)

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REC__STR2(x) #x
#define REC__STR(x) REC__STR2(x)

enum real {
	REAL_EXECVE,
	REAL_EXECV,
	REAL_EXECVP,
	REAL_EXECVPE,
	REAL_FEXECVE,
	REAL_EXECVEAT,
	REAL_NR
};

/* glibc's versions: execvpe came with 2.11 (as __longjmp_chk did: the base on ARM64). */
static struct rec__next real_sym[REAL_NR] = {
	[REAL_EXECVE] = { "execve", REC__STR(REC_GLIBC_HOOK_VERSION), NULL },
	[REAL_EXECV] = { "execv", REC__STR(REC_GLIBC_HOOK_VERSION), NULL },
	[REAL_EXECVP] = { "execvp", REC__STR(REC_GLIBC_HOOK_VERSION), NULL },
	[REAL_EXECVPE] = { "execvpe", REC__STR(REC_GLIBC_LONGJMP_CHK_VERSION), NULL },
	[REAL_FEXECVE] = { "fexecve", REC__STR(REC_GLIBC_HOOK_VERSION), NULL },
	[REAL_EXECVEAT] = { "execveat", "GLIBC_2.34", NULL },
};

/*
 * The definition after librec's (libc's; interpose.c): looked up at load
 * (below), so that an exec in a child after fork() or in a signal handler
 * never enters the dynamic linker. NULL (errno ENOSYS) if there is none.
 */
static void *real(enum real which)
{
	return rec__next_fn(&real_sym[which]);
}

#if defined(REC_STATIC_EXEC)
/*
 * static_exec: the exec family in a program linked fully static, where no
 * libc definition can be looked up after librec's copy: as glibc's own
 * (2.36): execve() is the system call, fexecve() execveat() with an empty
 * path, and the p variants search as its execvpe.c does -- a name with a
 * slash as it is, else each PATH entry in turn (glibc's default when PATH
 * is unset; an empty entry is the current directory), a file the kernel
 * does not know how to run (ENOEXEC) run by /bin/sh, the errors that mean
 * "not here" passed by, EACCES reported if one was seen and nothing ran.
 */
static int static_execve(const char *path, char *const argv[], char *const envp[])
{
	return (int)syscall(SYS_execve, path, argv, envp);
}

static int static_execv(const char *path, char *const argv[])
{
	return static_execve(path, argv, environ);
}

static int static_fexecve(int fd, char *const argv[], char *const envp[])
{
	if (fd < 0 || !argv || !envp) {
		errno = EINVAL;
		return -1;
	}
	return (int)syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
}

static int static_execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			   int flags)
{
	return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
}

/* file (found, but not an executable format) run by the shell: argv[0] replaced by it. */
static void static_script(const char *file, char *const argv[], char *const envp[])
{
	size_t argc = 1;

	while (argv[0] && argv[argc])
		if (++argc >= INT_MAX - 1) {
			errno = E2BIG;
			return;
		}
	const char *sh_argv[argc + 2];

	sh_argv[0] = "/bin/sh";
	sh_argv[1] = file;
	for (size_t i = 1; i < argc; i++)
		sh_argv[i + 1] = argv[i];
	sh_argv[argc + 1] = NULL;
	static_execve(sh_argv[0], (char *const *)sh_argv, envp);
}

static int static_execvpe(const char *file, char *const argv[], char *const envp[])
{
	const char *path = rec__env_exec_path(), *p, *end;
	size_t n = strnlen(file, NAME_MAX + 1);
	bool eacces = false;

	if (!file[0]) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(file, '/')) {
		static_execve(file, argv, envp);
		if (errno == ENOEXEC)
			static_script(file, argv, envp);
		return -1;
	}
	if (n > NAME_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!path)
		path = "/bin:/usr/bin"; /* confstr(_CS_PATH) */
	for (p = path;; p = end + 1) {
		char buf[PATH_MAX];
		size_t d;

		end = strchrnul(p, ':');
		d = (size_t)(end - p);
		if (d + 1 + n + 1 <= sizeof(buf)) {
			memcpy(buf, p, d);
			buf[d] = '/';
			/* An empty entry: the file itself, in the current directory. */
			memcpy(buf + d + (d > 0), file, n + 1);
			static_execve(buf, argv, envp);
			if (errno == ENOEXEC)
				static_script(buf, argv, envp);
			switch (errno) {
			case EACCES:
				eacces = true;
				break;
			case ENOENT:
			case ESTALE:
			case ENOTDIR:
			case ENODEV:
			case ETIMEDOUT:
				break;
			default:
				return -1; /* found, but it could not run: that error */
			}
		}
		if (!*end)
			break;
	}
	if (eacces)
		errno = EACCES;
	return -1;
}

static int static_execvp(const char *file, char *const argv[])
{
	return static_execvpe(file, argv, environ);
}

/* The fully static program's exec, where real() found none: static_exec's. */
#define STATIC_EXEC(fn) (static_##fn)
#else
#define STATIC_EXEC(fn) NULL
#endif

__attribute__((constructor)) static void exec_load(void)
{
	for (int i = 0; i < REAL_NR; i++)
		real((enum real)i);
}

/* Whether an exec of the file (at dirfd, path) will most likely succeed. */
static bool runnable_at(int dirfd, const char *path, int flags)
{
	struct stat st;

	return path[0] && fstatat(dirfd, path, &st, flags & AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st.st_mode) && faccessat(dirfd, path, X_OK, AT_EACCESS) == 0;
}

static bool runnable(const char *path)
{
	return runnable_at(AT_FDCWD, path, 0);
}

/* As execvp() searches: a name with a slash as it is, else each PATH entry. */
static bool runnable_on_path(const char *file)
{
	const char *path = rec__env_exec_path(), *p, *end;
	char buf[PATH_MAX];
	size_t n = strlen(file);

	if (strchr(file, '/'))
		return runnable(file);
	if (!file[0])
		return false;
	if (!path)
		path = "/bin:/usr/bin"; /* glibc's default (confstr(_CS_PATH)) */
	for (p = path;; p = end + 1) {
		size_t d;

		end = strchrnul(p, ':');
		d = (size_t)(end - p);
		if (d + 1 + n < sizeof(buf)) {
			/* An empty entry is the current directory. */
			memcpy(buf, d ? p : ".", d ? d : 1);
			buf[d ? d : 1] = '/';
			memcpy(buf + (d ? d : 1) + 1, file, n + 1);
			if (runnable(buf))
				return true;
		}
		if (!*end)
			return false;
	}
}

/* Ends the recording before an exec that will likely succeed. Return: whether it did. */
static bool before(bool likely)
{
	return likely && rec__exec_begin();
}

/* The exec returned (it failed): recording goes on. Keeps errno. */
static int after(bool ended, const char *what)
{
	int err = errno;

	if (ended)
		rec__exec_failed(what, err);
	errno = err;
	return -1;
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);

static int do_execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn f = (execve_fn)real(REAL_EXECVE);
	bool ended;

	if (!f && !(f = STATIC_EXEC(execve)))
		return -1;
	ended = before(rec__exec_wanted() && runnable(path));
	f(path, argv, envp);
	return after(ended, path);
}

static int do_execv(const char *path, char *const argv[])
{
	execv_fn f = (execv_fn)real(REAL_EXECV);
	bool ended;

	if (!f && !(f = STATIC_EXEC(execv)))
		return -1;
	ended = before(rec__exec_wanted() && runnable(path));
	f(path, argv);
	return after(ended, path);
}

static int do_execvp(const char *file, char *const argv[])
{
	execv_fn f = (execv_fn)real(REAL_EXECVP);
	bool ended;

	if (!f && !(f = STATIC_EXEC(execvp)))
		return -1;
	ended = before(rec__exec_wanted() && runnable_on_path(file));
	f(file, argv);
	return after(ended, file);
}

static int do_execvpe(const char *file, char *const argv[], char *const envp[])
{
	execve_fn f = (execve_fn)real(REAL_EXECVPE);
	bool ended;

	if (!f && !(f = STATIC_EXEC(execvpe)))
		return -1;
	ended = before(rec__exec_wanted() && runnable_on_path(file));
	f(file, argv, envp);
	return after(ended, file);
}

/*
 * The program's calls: copies exported under glibc's versions, which the
 * dynamic linker matches by name (as hooks.c's copies of glibc's hooks and
 * sample.c's pthread_create()), in librectrace.so; in librectrace.a the
 * plain names, global (bundle_static.sh keeps them so), with the same
 * addresses.
 */
#if defined(REC_STATIC_EXEC)
#define EXPORT(name, ver)                                                                       \
	__asm__(".globl " #name "\n\t.type " #name ", %function\n\t.set " #name ", rec__" #name \
		"_glibc")
#else
#define EXPORT(name, ver) __asm__(".symver rec__" #name "_glibc, " #name "@" ver)
#endif

int rec__execve_glibc(const char *path, char *const argv[], char *const envp[]) REC_API;
int rec__execv_glibc(const char *path, char *const argv[]) REC_API;
int rec__execvp_glibc(const char *file, char *const argv[]) REC_API;
int rec__execvpe_glibc(const char *file, char *const argv[], char *const envp[]) REC_API;
int rec__execl_glibc(const char *path, const char *arg, ...) REC_API;
int rec__execlp_glibc(const char *file, const char *arg, ...) REC_API;
int rec__execle_glibc(const char *path, const char *arg, ...) REC_API;
int rec__fexecve_glibc(int fd, char *const argv[], char *const envp[]) REC_API;
int rec__execveat_glibc(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags) REC_API;
EXPORT(execve, REC__STR(REC_GLIBC_HOOK_VERSION));
EXPORT(execv, REC__STR(REC_GLIBC_HOOK_VERSION));
EXPORT(execvp, REC__STR(REC_GLIBC_HOOK_VERSION));
EXPORT(execvpe, REC__STR(REC_GLIBC_LONGJMP_CHK_VERSION));
EXPORT(execl, REC__STR(REC_GLIBC_HOOK_VERSION));
EXPORT(execlp, REC__STR(REC_GLIBC_HOOK_VERSION));
EXPORT(execle, REC__STR(REC_GLIBC_HOOK_VERSION));
EXPORT(fexecve, REC__STR(REC_GLIBC_HOOK_VERSION));
EXPORT(execveat, "GLIBC_2.34");

int rec__execve_glibc(const char *path, char *const argv[], char *const envp[])
{
	return do_execve(path, argv, envp);
}

int rec__execv_glibc(const char *path, char *const argv[])
{
	return do_execv(path, argv);
}

int rec__execvp_glibc(const char *file, char *const argv[])
{
	return do_execvp(file, argv);
}

int rec__execvpe_glibc(const char *file, char *const argv[], char *const envp[])
{
	return do_execvpe(file, argv, envp);
}

/*
 * execl(), execlp(), execle(): their arguments as an argv on the stack, as
 * glibc makes it (it may be called in a child after fork(): no malloc).
 * EXEC_LIST_ARGS(argv, arg, ap) declares argv, a variable-length array in
 * the caller's scope (so not a function): the arguments from arg up to the
 * NULL that ends them, then NULL; ap is left past that NULL (execle()'s
 * envp comes next). Too many (more than an int counts): -1, errno E2BIG.
 */
#define EXEC_LIST_ARGS(argv, arg, ap)            \
	size_t nr_##argv = count_args(arg, &ap); \
	if (nr_##argv > INT_MAX - 1) {           \
		va_end(ap);                      \
		errno = E2BIG;                   \
		return -1;                       \
	}                                        \
	const char *argv[nr_##argv + 1];         \
	fill_args(argv, nr_##argv, arg, &ap)

/* How many arguments the list has, arg first, without the NULL that ends it. */
static size_t count_args(const char *arg, va_list *ap)
{
	va_list c;
	size_t n;

	if (!arg)
		return 0;
	va_copy(c, *ap);
	for (n = 1; va_arg(c, const char *); n++)
		;
	va_end(c);
	return n;
}

/*
 * argv[0..n) from arg and *ap, then NULL; *ap left past the list's NULL.
 * The caller's va_list by pointer, not a copy: execle() reads on after it
 * (C11 7.16: a va_list the callee used is indeterminate in the caller; on
 * ARM64 it is a structure, passed by value).
 */
static void fill_args(const char **argv, size_t n, const char *arg, va_list *ap)
{
	argv[0] = arg;
	for (size_t i = 1; i < n; i++)
		argv[i] = va_arg(*ap, const char *);
	argv[n] = NULL;
	if (arg)
		(void)va_arg(*ap, const char *); /* the NULL that ends the arguments */
}

int rec__execl_glibc(const char *path, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	EXEC_LIST_ARGS(argv, arg, ap);
	va_end(ap);
	return do_execv(path, (char *const *)argv);
}

int rec__execlp_glibc(const char *file, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	EXEC_LIST_ARGS(argv, arg, ap);
	va_end(ap);
	return do_execvp(file, (char *const *)argv);
}

int rec__execle_glibc(const char *path, const char *arg, ...)
{
	char *const *envp;
	va_list ap;

	va_start(ap, arg);
	EXEC_LIST_ARGS(argv, arg, ap);
	envp = va_arg(ap, char *const *);
	va_end(ap);
	return do_execve(path, (char *const *)argv, envp);
}

int rec__fexecve_glibc(int fd, char *const argv[], char *const envp[])
{
	int (*f)(int, char *const[], char *const[]) =
		(int (*)(int, char *const[], char *const[]))real(REAL_FEXECVE);
	struct stat st;
	bool ended;

	if (!f && !(f = STATIC_EXEC(fexecve)))
		return -1;
	ended = before(rec__exec_wanted() && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		       (st.st_mode & 0111));
	f(fd, argv, envp);
	return after(ended, "a descriptor");
}

int rec__execveat_glibc(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags)
{
	int (*f)(int, const char *, char *const[], char *const[], int) =
		(int (*)(int, const char *, char *const[], char *const[], int))real(REAL_EXECVEAT);
	struct stat st;
	bool likely, ended;

	if (!f && !(f = STATIC_EXEC(execveat)))
		return -1;
	likely = rec__exec_wanted();
	if (likely && !path[0] && (flags & AT_EMPTY_PATH))
		likely = fstat(dirfd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
	else if (likely)
		likely = runnable_at(dirfd, path, flags);
	ended = before(likely);
	f(dirfd, path, argv, envp, flags);
	return after(ended, path[0] ? path : "a descriptor");
}

#endif
