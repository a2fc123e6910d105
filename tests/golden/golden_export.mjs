// SPDX-License-Identifier: MIT
// golden_export.mjs DIR - every Parquet table of an export folder read back by
// DuckDB, the reader users query exports with: per file (in name order) its
// columns with their DuckDB types, then its rows sorted by every column
// (row groups of several walkers may come in any order), one line each,
// values joined by ',' (NULL empty). For tests/golden/convert.sh.
import fs from 'node:fs';
import path from 'node:path';
import { duck } from '../analyzer/pqlib.mjs';

const dir = process.argv[2];
const db = await duck();
const show = (v) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
for (const f of fs.readdirSync(dir).sort()) {
	const file = path.join(dir, f).replaceAll("'", "''");
	console.log(`--- ${f}`);
	const cols = await db.all(`DESCRIBE SELECT * FROM read_parquet('${file}')`);
	for (const c of cols)
		console.log(`${c.column_name} ${c.column_type}`);
	const rows = await db.all(`SELECT * FROM read_parquet('${file}') ORDER BY ALL`);
	console.log(`${rows.length} rows`);
	for (const r of rows)
		console.log(cols.map((c) => show(r[c.column_name])).join(','));
}
