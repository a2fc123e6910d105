/* SPDX-License-Identifier: MIT */
/*
 * writer_tid.h - for librec's test programs: the tid of librec's writer
 * thread in this process (it names itself "rec-writer"), or 0.
 */
#ifndef WRITER_TID_H
#define WRITER_TID_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static inline pid_t writer_tid(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t tid = 0;

	if (!d)
		return 0;
	while (!tid && (e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (f && fgets(comm, sizeof(comm), f) && strncmp(comm, "rec-writer", 10) == 0)
			tid = (pid_t)atol(e->d_name);
		if (f)
			fclose(f);
	}
	closedir(d);
	return tid;
}

#endif
