/* SPDX-License-Identifier: MIT */
/*
 * sqlite_host.c - a CPU-bound SQLite workload for bench/sampling.sh: the
 * third-party program whose sampled profile is compared with perf's. It
 * links Debian's own libsqlite3.a (libsqlite3-dev: the library as Debian
 * built it, -O2 without frame pointers, symbols kept), knows nothing of rec
 * and is recorded through LD_PRELOAD by `tracetool record`.
 * Usage: sqlite_host [ROWS] (default 300000): inserts ROWS rows into an
 * in-memory table, indexes them, then runs aggregate, join and sort queries.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static void run(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "sqlite_host: %s: %s\n", sql, err);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	long rows = argc > 1 ? strtol(argv[1], NULL, 10) : 300000;
	sqlite3 *db;
	sqlite3_stmt *st;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		return 1;
	run(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, s TEXT, x REAL)");
	run(db, "BEGIN");
	if (sqlite3_prepare_v2(db, "INSERT INTO t(k, s, x) VALUES(?, ?, ?)", -1, &st, NULL))
		return 1;
	for (long i = 0; i < rows; i++) {
		char s[32];

		snprintf(s, sizeof(s), "name-%ld", (i * 7919) % 100003);
		sqlite3_bind_int64(st, 1, (i * 31) % 1000);
		sqlite3_bind_text(st, 2, s, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(st, 3, (double)i / 3.0);
		sqlite3_step(st);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	run(db, "COMMIT");
	run(db, "CREATE INDEX tk ON t(k)");
	for (int r = 0; r < 3; r++) {
		run(db, "SELECT k, count(*), sum(x), max(s) FROM t GROUP BY k ORDER BY 3 DESC");
		run(db, "SELECT count(*) FROM t a JOIN t b ON a.k = b.k AND a.id < b.id + 3 AND a.id > b.id - 3");
		run(db, "SELECT s FROM t ORDER BY s, x LIMIT 10 OFFSET 1000");
		run(db, "SELECT sum(length(s)) FROM t WHERE s LIKE '%9%'");
	}
	sqlite3_close(db);
	return 0;
}
