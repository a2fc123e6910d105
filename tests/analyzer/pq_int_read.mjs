// SPDX-License-Identifier: MIT
// pq_int_read.mjs FILE ROWS - reads the table of `pq_gen --int-row` (columns
// a, b, c, d) with DuckDB and with hyparquet and checks every value against
// pq_gen.c's rules, repeated here. Column a is xorshift64 noise in 4 rows of
// 5: its bit-packed deltas do not compress, so from 1000 rows on its chunks
// are zstd frames of raw blocks (parquet.c: no smaller than the pages they
// hold), while b's steps of 1000 compress; every chunk's codec is ZSTD
// (docs/EXPORT.md, "Parquet files"). Column c jumps to an end of the int32 range every 11th
// row: differences that wrap in 32 bits.
import { duck, hyparquet, eq, ok, done } from './pqlib.mjs';

const [file, rowsS] = process.argv.slice(2);
const rows = Number(rowsS);
const M = (1n << 64n) - 1n;
const exp = [];
let x = 88172645463325252n;
for (let i = 0; i < rows; i++) {
	x ^= (x << 13n) & M;
	x ^= x >> 7n;
	x ^= (x << 17n) & M;
	const bi = BigInt(i);
	exp.push({
		a: i % 5 ? BigInt.asIntN(64, x) : bi * 3n - 7n,
		b: i % 7 === 3 ? null : bi * 1000n - 123456789n,
		c: i % 11 === 5 ? (i & 1 ? 2147483647 - i : -2147483648 + i)
			: Number(BigInt.asIntN(32, bi * 7919n)) - 1000000,
		d: i % 3 === 1,
	});
}
let sa = 0n, sb = 0n, sc = 0n, nb = 0, nd = 0;
for (const e of exp) {
	sa += e.a;
	if (e.b === null) nb++;
	else sb += e.b;
	sc += BigInt(e.c);
	if (e.d) nd++;
}

const db = await duck();
const q = `read_parquet('${file}')`;
const agg = await db.one(`SELECT count(*) AS n, coalesce(sum(a::HUGEINT), 0)::VARCHAR AS sa,
  coalesce(sum(b), 0)::VARCHAR AS sb, coalesce(sum(c), 0)::VARCHAR AS sc,
  count(*) - count(b) AS nb, count(*) FILTER (WHERE d) AS nd FROM ${q}`);
eq('duckdb count', agg.n, BigInt(rows));
eq('duckdb sum(a)', agg.sa, sa.toString());
eq('duckdb sum(b)', agg.sb, sb.toString());
eq('duckdb sum(c)', agg.sc, sc.toString());
eq('duckdb null b', agg.nb, BigInt(nb));
eq('duckdb d', agg.nd, BigInt(nd));
const md = await db.all(`SELECT row_group_id AS rg, path_in_schema AS col, compression,
  total_compressed_size AS cs, total_uncompressed_size AS us, row_group_num_rows AS n
  FROM parquet_metadata('${file}') ORDER BY row_group_id, column_id`);
for (const m of md) {
	eq(`codec rg${m.rg} ${m.col}`, m.compression, 'ZSTD');
	if (Number(m.n) >= 1000 && m.col === 'a')
		ok(`rg${m.rg} a (noise) stored in raw blocks: ${m.cs} >= ${m.us}`, m.cs >= m.us);
	if (Number(m.n) >= 1000 && m.col === 'b')
		ok(`rg${m.rg} b (steps) compressed: ${m.cs} < ${m.us}`, m.cs < m.us);
}

const hp = await hyparquet();
const got = await hp.rows(file);
eq('hyparquet rows', got.length, rows);
let bad = 0;
for (let i = 0; i < got.length && bad < 5; i++) {
	for (const k of ['a', 'b', 'c', 'd']) {
		let g = got[i][k];
		if (typeof exp[i][k] === 'bigint' && typeof g === 'number') g = BigInt(g);
		if (g === undefined) g = null;
		if (g !== exp[i][k]) {
			bad++;
			eq(`hyparquet row ${i} ${k}`, g, exp[i][k]);
		}
	}
}
done();
