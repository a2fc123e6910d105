// SPDX-License-Identifier: MIT
// pqlib.mjs - the two independent Parquet readers of the export tests, loaded
// from the cache directory that scripts/npm-clients.sh filled (REC_NPM_DIR):
// DuckDB (@duckdb/node-api) and hyparquet (+ hyparquet-compressors for zstd).
// Also a tiny assertion helper: every failed check is printed and counted,
// and done() exits 1 if any failed.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const dir = process.env.REC_NPM_DIR;
if (!dir) {
	console.error('pqlib: REC_NPM_DIR is not set');
	process.exit(2);
}
const nm = path.join(dir, 'node_modules');
const require = createRequire(path.join(dir, 'package.json'));

export async function duck() {
	const { DuckDBInstance } = require('@duckdb/node-api');
	const inst = await DuckDBInstance.create(':memory:');
	const con = await inst.connect();
	return {
		// rows as objects, BIGINTs as JS BigInt
		async all(sql) {
			const r = await con.runAndReadAll(sql);
			return r.getRowObjects();
		},
		async one(sql) {
			const rows = await this.all(sql);
			return rows[0];
		},
	};
}

export async function hyparquet() {
	const hp = await import(pathToFileURL(path.join(nm, 'hyparquet/src/node.js')).href);
	const hc = await import(pathToFileURL(path.join(nm, 'hyparquet-compressors/src/index.js')).href);
	return {
		async rows(file) {
			const f = await hp.asyncBufferFromFile(file);
			return hp.parquetReadObjects({ file: f, compressors: hc.compressors });
		},
		async meta(file) {
			const f = await hp.asyncBufferFromFile(file);
			return hp.parquetMetadataAsync(f);
		},
	};
}

let failures = 0;
const show = (v) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() + 'n' : x));
export function eq(what, got, want) {
	const g = typeof got === 'bigint' ? got : got;
	if (show(g) !== show(want)) {
		failures++;
		console.error(`FAIL ${what}: got ${show(got)}, want ${show(want)}`);
	}
}
export function ok(what, cond) {
	if (!cond) {
		failures++;
		console.error(`FAIL ${what}`);
	}
}
export function done() {
	if (failures) {
		console.error(`${failures} check(s) failed`);
		process.exit(1);
	}
	console.log('all checks passed');
}
