// SPDX-License-Identifier: MIT
// export_same.mjs A B [ROW_GROUPS_OF_B] - two Parquet exports of the same
// traces hold the same rows, table by table, as multisets (DuckDB's EXCEPT
// ALL both ways): an export by one walker (A) and by several (B, whose
// walkers write row groups of their own into one file, in no fixed order).
// With ROW_GROUPS_OF_B, B's activations.parquet must have exactly that many
// row groups (each walker's own: the parallel path was taken).
import fs from 'node:fs';
import { duck, eq, ok, done } from './pqlib.mjs';

const [a, b, groups] = process.argv.slice(2);
const db = await duck();
for (const name of ['runs', 'threads', 'scopes', 'activations', 'values', 'instants', 'flows', 'args']) {
	const fa = `${a}/${name}.parquet`, fb = `${b}/${name}.parquet`;
	ok(`${name}: both exist`, fs.existsSync(fa) && fs.existsSync(fb));
	const na = await db.one(`SELECT count(*) AS n FROM read_parquet('${fa}')`);
	const nb = await db.one(`SELECT count(*) AS n FROM read_parquet('${fb}')`);
	eq(`${name}: rows`, nb.n, na.n);
	const d = await db.one(`SELECT count(*) AS n FROM (
	    (SELECT * FROM read_parquet('${fa}') EXCEPT ALL SELECT * FROM read_parquet('${fb}'))
	    UNION ALL
	    (SELECT * FROM read_parquet('${fb}') EXCEPT ALL SELECT * FROM read_parquet('${fa}')))`);
	eq(`${name}: rows in one export only`, Number(d.n), 0);
}
if (groups !== undefined) {
	const g = await db.one(`SELECT count(DISTINCT row_group_id) AS n
	    FROM parquet_metadata('${b}/activations.parquet')`);
	eq('row groups of the parallel export', Number(g.n), Number(groups));
}
done();
