/* SPDX-License-Identifier: MIT */
/*
 * prog_execself.c - a traced program that exec()s itself (test_exec.c,
 * finding F2): program image GEN records 1000 * (GEN + 1) `work` scopes on
 * its main thread and 500 `worker` scopes on a second thread that then
 * waits, still running, for the exec to end it; then, unless it is the
 * last image, it exec()s the next one through /proc/self/exe.
 * Usage: prog_execself MODE LAST [GEN]
 *   self     exec() itself with execv() until image LAST
 *   selfl    the same with execl()
 *   selfle   the same with execle(), the environment passed (REC_OUTPUT in it)
 *   selflp   the same with execlp() (a name without a slash, found on PATH)
 *   selfvpe  the same with execvpe() (a name without a slash, found on PATH)
 *   stop     rec_stop() before each exec() (what a librectrace.a program does)
 *   fail     exec() a file that is executable but no program (ENOEXEC),
 *            then 500 more `work` scopes; LAST is the file
 *   fail3    the same three times, 500 more `work` scopes after each
 *   missing  exec() a file that does not exist, then 500 more `work` scopes
 *   vfork    vfork() a child that exec()s /bin/true, then 500 more `work`
 *   spawn    posix_spawn() /bin/true, then system("exec /bin/true"), then 500
 *            more `work`
 *   flight   REC_MODE=flight: rec_snapshot() in each image before its exec
 * Exit: 0, or 2 (usage), 3 (an exec returned when it should not have, or
 * did not fail as asked), 4 (a thread or a child failed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <rec.h>
#include <semaphore.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static sem_t worked;

static void work(void)
{
	TRACE_SCOPE();
	__asm__ volatile("" ::: "memory");
}

static void worker(void)
{
	TRACE_SCOPE();
	__asm__ volatile("" ::: "memory");
}

static void *worker_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < 500; i++)
		worker();
	sem_post(&worked);
	for (;;)
		pause(); /* still running when the exec ends every thread */
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "";
	int last = argc > 2 ? atoi(argv[2]) : 0, gen = argc > 3 ? atoi(argv[3]) : 0;
	char next[16];
	pthread_t th;

	if (argc < 3)
		return 2;
	sem_init(&worked, 0, 0);
	if (pthread_create(&th, NULL, worker_main, NULL) != 0)
		return 4;
	for (int i = 0; i < 1000 * (gen + 1); i++)
		work();
	while (sem_wait(&worked) != 0)
		;
	if (strcmp(mode, "fail") == 0 || strcmp(mode, "fail3") == 0 ||
	    strcmp(mode, "missing") == 0) {
		char *const args[] = { argv[2], NULL };

		for (int k = 0; k < (strcmp(mode, "fail3") == 0 ? 3 : 1); k++) {
			if (execv(argv[2], args) == 0 ||
			    errno != (strcmp(mode, "missing") != 0 ? ENOEXEC : ENOENT))
				return 3;
			for (int i = 0; i < 500; i++)
				work();
		}
		return 0;
	}
	if (strcmp(mode, "vfork") == 0) {
		int status;
		pid_t pid = vfork();

		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return 4;
		for (int i = 0; i < 500; i++)
			work();
		return 0;
	}
	if (strcmp(mode, "spawn") == 0) {
		char *const args[] = { "true", NULL };
		int status;
		pid_t pid;

		if (posix_spawn(&pid, "/bin/true", NULL, NULL, args, environ) != 0 ||
		    waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0 || system("exec /bin/true") != 0)
			return 4;
		for (int i = 0; i < 500; i++)
			work();
		return 0;
	}
	if (gen >= last)
		return 0;
	snprintf(next, sizeof(next), "%d", gen + 1);
	if (strcmp(mode, "flight") == 0 && rec_snapshot("before exec") != 0)
		return 3;
	if (strcmp(mode, "stop") == 0 && rec_stop() != 0)
		return 3;
	if (strcmp(mode, "selfl") == 0) {
		execl("/proc/self/exe", argv[0], mode, argv[2], next, (char *)NULL);
	} else if (strcmp(mode, "selfle") == 0) {
		execle("/proc/self/exe", argv[0], mode, argv[2], next, (char *)NULL, environ);
	} else if (strcmp(mode, "selflp") == 0) {
		setenv("PATH", "/nonexistent:/proc/self", 1);
		execlp("exe", argv[0], mode, argv[2], next, (char *)NULL);
	} else if (strcmp(mode, "selfvpe") == 0) {
		char *const args[] = { argv[0], argv[1], argv[2], next, NULL };

		/* "exe" found in the second entry; the rest of the environment (REC_OUTPUT) on. */
		setenv("PATH", "/nonexistent:/proc/self", 1);
		execvpe("exe", args, environ);
	} else {
		char *const args[] = { argv[0], argv[1], argv[2], next, NULL };

		execv("/proc/self/exe", args);
	}
	return 3;
}
