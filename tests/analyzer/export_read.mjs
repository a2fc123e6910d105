// SPDX-License-Identifier: MIT
// export_read.mjs DIR FORMAT SUMMARY0_CSV RUN... - checks `tracetool export` of
// ex_gen recordings (RUN = PID:START_UNIX_NS:N:M, one per run in run_id
// order) with DuckDB and, for Parquet, hyparquet: exact row counts, sums,
// types, nulls, parent links, wall-clock times, two runs in one export, the
// README's p99 query, and self_ns per scope equal to `tracetool summary`'s
// for run 0 (SUMMARY0_CSV).
import fs from 'node:fs';
import { duck, hyparquet, eq, ok, done } from './pqlib.mjs';

const [dir, format, summaryCsv, ...specs] = process.argv.slice(2);
const runs = specs.map((s, run_id) => {
	const [pid, start, n, m] = s.split(':');
	return { run_id, pid: BigInt(pid), start: BigInt(start), n: Number(n), m: Number(m) };
});
const B = BigInt;
const src = (name) => format === 'parquet' ? `read_parquet('${dir}/${name}.parquet')`
	: `read_csv('${dir}/${name}.csv', header = true, auto_detect = true)`;
const db = await duck();
for (const name of ['runs', 'threads', 'scopes', 'activations'])
	await db.all(`CREATE VIEW ${name} AS SELECT * FROM ${src(name)}`);
const t = (name) => name;

// runs
const rr = await db.all(`SELECT * FROM ${t('runs')} ORDER BY run_id`);
eq('runs rows', rr.length, runs.length);
for (const r of runs) {
	const g = rr[r.run_id] || {};
	eq(`run ${r.run_id} pid`, B(g.pid), r.pid);
	eq(`run ${r.run_id} start_unix_ns`, B(g.start_unix_ns), r.start);
	eq(`run ${r.run_id} events`, B(g.events), B(2 * (3 * r.n + 3 * r.m) + 1));
	eq(`run ${r.run_id} dropped`, B(g.dropped), 0n);
	eq(`run ${r.run_id} clean`, g.clean, true);
	eq(`run ${r.run_id} program`, g.program, null);
	const last = Math.max((r.n - 1) * 2000 + 1000, 4000 + r.m * 1000);
	eq(`run ${r.run_id} duration_ns`, B(g.duration_ns), B(last));
}

// threads
const th = await db.all(`SELECT run_id, thread_id, os_tid, name FROM ${t('threads')} ORDER BY run_id, thread_id`);
eq('threads rows', th.length, 2 * runs.length);
for (const r of runs) {
	const a = th.filter((x) => Number(x.run_id) === r.run_id);
	eq(`run ${r.run_id} threads`, a.map((x) => [B(x.thread_id), B(x.os_tid), x.name]),
		[[1n, r.pid, 'main'], [2n, r.pid + 1n, null]]);
}

// scopes
const sc = await db.one(`SELECT count(*) AS n, count(DISTINCT name) AS d FROM ${t('scopes')}`);
eq('scopes rows', B(sc.n), B(3 * runs.length));
eq('scope names', B(sc.d), 3n);

// activations, per run and scope
const A = t('activations'), S = t('scopes');
const per = await db.all(`SELECT a.run_id, s.name, count(*) AS calls,
    count(*) FILTER (WHERE error) AS errors, count(dur_ns) AS timed,
    coalesce(sum(self_ns), 0) AS self, coalesce(sum(dur_ns), 0) AS dur
  FROM ${A} a JOIN ${S} s USING (run_id, scope_id) GROUP BY ALL ORDER BY 1, 2`);
for (const r of runs) {
	const want = [
		{ name: 'fib', calls: 3 * r.m, errors: 0, self: 900 * r.m, dur: 1700 * r.m },
		{ name: 'main_loop', calls: r.n, errors: 0, self: 600 * r.n, dur: 1000 * r.n },
		{ name: 'parse', calls: 2 * r.n + 1, errors: 1, self: 400 * r.n, dur: 400 * r.n },
	].filter((w) => w.calls > 0);
	const got = per.filter((x) => Number(x.run_id) === r.run_id).map((x) => ({
		name: x.name, calls: Number(x.calls), errors: Number(x.errors),
		self: Number(x.self), dur: Number(x.dur) }));
	eq(`run ${r.run_id} per scope`, got, want);
	const st = await db.one(`SELECT count(*) AS n, count(*) FILTER (WHERE parent_id IS NULL) AS roots,
	    count(*) - count(self_ns) AS null_self, max(depth) AS maxd,
	    count(DISTINCT activation_id) AS ids,
	    count(*) FILTER (WHERE start_unix_ns - start_ns <> ${r.start}) AS bad_wall
	  FROM ${A} WHERE run_id = ${r.run_id}`);
	eq(`run ${r.run_id} activations`, Number(st.n), 3 * r.n + 3 * r.m + 1);
	eq(`run ${r.run_id} unique ids`, Number(st.ids), 3 * r.n + 3 * r.m + 1);
	eq(`run ${r.run_id} roots`, Number(st.roots), r.n + r.m + 1);
	eq(`run ${r.run_id} null self`, Number(st.null_self), 1);
	eq(`run ${r.run_id} max depth`, Number(st.maxd), r.m ? 2 : 1);
	eq(`run ${r.run_id} wall clock`, Number(st.bad_wall), 0);
}
// Every parent exists in its run and thread, one level up, and encloses its child.
const bad = await db.one(`SELECT count(*) AS n FROM ${A} c LEFT JOIN ${A} p
    ON p.run_id = c.run_id AND p.activation_id = c.parent_id
  WHERE c.parent_id IS NOT NULL AND (p.activation_id IS NULL OR p.thread_id <> c.thread_id
    OR p.depth + 1 <> c.depth OR c.start_ns < p.start_ns
    OR c.start_ns + c.dur_ns > p.start_ns + p.dur_ns)`);
eq('parent links', Number(bad.n), 0);

// Types as the schema (docs/EXPORT.md) says.
if (format === 'parquet') {
	const ty = await db.all(`DESCRIBE SELECT * FROM ${A}`);
	eq('activations types', ty.map((x) => `${x.column_name}:${x.column_type}`), [
		'run_id:INTEGER', 'thread_id:BIGINT', 'scope_id:BIGINT', 'activation_id:BIGINT',
		'parent_id:BIGINT', 'depth:INTEGER', 'start_ns:BIGINT', 'start_unix_ns:BIGINT',
		'dur_ns:BIGINT', 'self_ns:BIGINT', 'error:BOOLEAN']);
	const md = await db.all(`SELECT DISTINCT compression FROM parquet_metadata('${dir}/activations.parquet')`);
	eq('compression', md.map((x) => x.compression), ['ZSTD']);
	const kv = await db.all(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('${dir}/activations.parquet') ORDER BY 1`);
	eq('schema version', kv.map((x) => `${x.k}=${x.v}`), ['rec.export.schema=2', 'rec.export.table=activations']);
}

// The README's recipe: p99 of a scope per run.
const p99 = await db.all(`SELECT run_id, quantile_disc(dur_ns, 0.99) AS p99
  FROM ${A} JOIN ${S} USING (run_id, scope_id) WHERE name = 'parse' AND NOT error
  GROUP BY run_id ORDER BY run_id`);
eq('p99 of parse per run', p99.map((x) => Number(x.p99)), runs.filter((r) => r.n).map(() => 300));

// self_ns per scope equals summary's for run 0.
const sum = fs.readFileSync(summaryCsv, 'utf8').trim().split('\n').slice(1)
	.map((l) => l.split(',')).map((f) => ({ name: f[0], calls: Number(f[1]), self: Number(f[3]) }))
	.sort((a, b) => a.name.localeCompare(b.name));
const mine = per.filter((x) => Number(x.run_id) === 0).map((x) => ({
	name: x.name, calls: Number(x.timed), self: Number(x.self) }));
eq('run 0 = summary (calls, self_ns)', mine, sum);

// A second reader: hyparquet, every activation row.
if (format === 'parquet') {
	const hp = await hyparquet();
	const rows = await hp.rows(`${dir}/activations.parquet`);
	eq('hyparquet rows', rows.length, runs.reduce((s, r) => s + 3 * r.n + 3 * r.m + 1, 0));
	let self = 0n, nulls = 0, errors = 0, roots = 0;
	for (const x of rows) {
		if (x.self_ns === null || x.self_ns === undefined) nulls++;
		else self += B(x.self_ns);
		if (x.error === true) errors++;
		if (x.parent_id === null || x.parent_id === undefined) roots++;
	}
	eq('hyparquet self sum', self, runs.reduce((s, r) => s + B(900 * r.m + 600 * r.n + 400 * r.n), 0n));
	eq('hyparquet null self', nulls, runs.length);
	eq('hyparquet errors', errors, runs.length);
	eq('hyparquet roots', roots, runs.reduce((s, r) => s + r.n + r.m + 1, 0));
	const ths = await hp.rows(`${dir}/threads.parquet`);
	eq('hyparquet thread names', ths.map((x) => x.name ?? null), runs.flatMap(() => ['main', null]));
}
done();
