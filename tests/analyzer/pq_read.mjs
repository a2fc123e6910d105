// SPDX-License-Identifier: MIT
// pq_read.mjs FILE ROWS ROW_GROUP_ROWS PAGE_ROWS - reads pq_gen's file with
// DuckDB and with hyparquet and checks every value against the rules pq_gen.c
// wrote them by (repeated here, independently), the statistics in the footer
// and the row-group layout.
import { duck, hyparquet, eq, ok, done } from './pqlib.mjs';

const [file, rowsS, rgS, pgS] = process.argv.slice(2);
const rows = Number(rowsS), rg = Number(rgS), pg = Number(pgS);

const rnd = [];
{
	const M = (1n << 64n) - 1n;
	let x = 88172645463325252n;
	for (let i = 0; i < rows; i++) {
		x ^= (x << 13n) & M;
		x ^= x >> 7n;
		x ^= (x << 17n) & M;
		const v = i % 1000 < 300 ? BigInt(i) : i % 1000 < 600 ? BigInt.asIntN(64, x)
			: (i & 1) ? -(1n << 63n) : (1n << 63n) - 1n;
		rnd.push(v);
	}
}
function expected(i) {
	const name = i % 11 === 0 ? null : i % 13 === 0 ? '' : i % 17 === 0 ? 'grüße' : `name_${i % 50}`;
	return {
		id: BigInt(i) * 1000003n - 5000000000n,
		small: i % 7 === 0 ? null : ((i * 31) % 1000003) - 500000,
		flag: i % 3 === 0,
		name,
		big: i >= 100 && i < rows - 100 ? BigInt(i) : null,
		rnd: rnd[i],
	};
}

// Sums and counts computed here from the rules.
let sumId = 0n, sumSmall = 0n, nullSmall = 0, flags = 0, nullName = 0, sumBig = 0n;
let minSmall = Infinity, maxSmall = -Infinity;
const names = new Set();
for (let i = 0; i < rows; i++) {
	const e = expected(i);
	sumId += e.id;
	if (e.small === null) nullSmall++;
	else {
		sumSmall += BigInt(e.small);
		minSmall = Math.min(minSmall, e.small);
		maxSmall = Math.max(maxSmall, e.small);
	}
	if (e.flag) flags++;
	if (e.name === null) nullName++;
	else names.add(e.name);
	if (e.big !== null) sumBig += e.big;
}

const db = await duck();
const q = `read_parquet('${file}')`;
const agg = await db.one(`SELECT count(*) AS n, coalesce(sum(id), 0) AS sid, coalesce(sum(small), 0) AS ss,
  count(*) - count(small) AS nsmall, count(*) FILTER (WHERE flag) AS flags,
  count(*) - count(name) AS nname, count(DISTINCT name) AS dname, coalesce(sum(big), 0) AS sbig,
  min(small) AS mins, max(small) AS maxs FROM ${q}`);
eq('duckdb count', agg.n, BigInt(rows));
eq('duckdb sum(id)', BigInt(agg.sid), sumId);
eq('duckdb sum(small)', BigInt(agg.ss), sumSmall);
eq('duckdb null small', agg.nsmall, BigInt(nullSmall));
eq('duckdb flags', agg.flags, BigInt(flags));
eq('duckdb null name', agg.nname, BigInt(nullName));
eq('duckdb distinct names', agg.dname, BigInt(names.size));
eq('duckdb sum(big)', BigInt(agg.sbig), sumBig);
eq('duckdb min(small)', agg.mins, minSmall === Infinity ? null : minSmall);
eq('duckdb max(small)', agg.maxs, maxSmall === -Infinity ? null : maxSmall);
const types = await db.all(`SELECT column_name, column_type, "null" AS nul FROM (DESCRIBE SELECT * FROM ${q})`);
eq('duckdb types', types.map((t) => `${t.column_name}:${t.column_type}`),
	['id:BIGINT', 'small:INTEGER', 'flag:BOOLEAN', 'name:VARCHAR', 'big:BIGINT', 'rnd:BIGINT']);
let sumRnd = 0n;
for (const v of rnd) sumRnd += v;
const sr = await db.one(`SELECT coalesce(sum(rnd::HUGEINT), 0)::VARCHAR AS s FROM ${q}`);
eq('duckdb sum(rnd)', sr.s, sumRnd.toString());
const grue = await db.one(`SELECT count(*) AS n FROM ${q} WHERE name = 'grüße'`);
let nGrue = 0;
for (let i = 0; i < rows; i++) if (expected(i).name === 'grüße') nGrue++;
eq('duckdb utf-8 string', grue.n, BigInt(nGrue));

// Footer: row groups and statistics as DuckDB's parquet_metadata sees them.
const md = await db.all(`SELECT row_group_id, row_group_num_rows AS n, path_in_schema AS col,
  stats_min_value AS mn, stats_max_value AS mx, stats_null_count AS nulls, compression
  FROM parquet_metadata('${file}') ORDER BY row_group_id, column_id`);
const nrg = Math.ceil(rows / rg);
eq('row groups', new Set(md.map((m) => m.row_group_id)).size, nrg);
for (const m of md) {
	// zstd frames, compressed or of raw blocks (parquet.c): docs/EXPORT.md, "Parquet files".
	eq(`compression rg${m.row_group_id} ${m.col}`, m.compression, 'ZSTD');
	const lo = Number(m.row_group_id) * rg, hi = Math.min(rows, lo + rg);
	eq(`rows of rg${m.row_group_id}`, Number(m.n), hi - lo);
	let nulls = 0, mn = null, mx = null;
	for (let i = lo; i < hi; i++) {
		const v = expected(i)[m.col];
		if (v === null) { nulls++; continue; }
		const k = typeof v === 'boolean' ? Number(v) : v;
		if (mn === null || k < mn) mn = k;
		if (mx === null || k > mx) mx = k;
	}
	eq(`null_count rg${m.row_group_id} ${m.col}`, Number(m.nulls), nulls);
	if (m.col === 'flag') {
		eq(`min rg${m.row_group_id} flag`, m.mn, mn ? 'true' : 'false');
		eq(`max rg${m.row_group_id} flag`, m.mx, mx ? 'true' : 'false');
	} else if (mn === null) {
		eq(`no min/max rg${m.row_group_id} ${m.col}`, [m.mn, m.mx], [null, null]);
	} else {
		eq(`min rg${m.row_group_id} ${m.col}`, m.mn, String(mn));
		eq(`max rg${m.row_group_id} ${m.col}`, m.mx, String(mx));
	}
}

// hyparquet: every row, every value.
const hp = await hyparquet();
const got = await hp.rows(file);
eq('hyparquet rows', got.length, rows);
let bad = 0;
for (let i = 0; i < got.length && bad < 5; i++) {
	const e = expected(i), g = got[i];
	const norm = (v) => (typeof v === 'number' && !Number.isInteger(v) ? v : v);
	for (const k of Object.keys(e)) {
		let gv = norm(g[k]);
		if (typeof e[k] === 'bigint' && typeof gv === 'number') gv = BigInt(gv);
		if (gv === undefined) gv = null;
		if (gv !== e[k]) {
			bad++;
			eq(`hyparquet row ${i} ${k}`, gv, e[k]);
		}
	}
}
const meta = await hp.meta(file);
eq('hyparquet num_rows', Number(meta.num_rows), rows);
eq('hyparquet key/value', meta.key_value_metadata?.find((kv) => kv.key === 'rec.test')?.value, 'pq_gen');
done();
