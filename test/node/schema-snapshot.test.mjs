// schema.sql is the readable snapshot of what migrations/ produces: two empty local D1 databases, one given the
// migrations as wrangler applies them and one given schema.sql, must end with the same tables, columns (type,
// NOT NULL, default, primary key), foreign keys and indexes (columns, uniqueness, partial WHERE).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openD1 } from '../../scripts/lib/d1.mjs';
import { ROOT } from '../../scripts/lib/import-ts.mjs';
import { applyMigrations, readMigrations } from '../../scripts/lib/migrations.mjs';

/** @typedef {import('../../scripts/lib/d1.mjs').D1Executor} D1Executor */

/**
 * Everything about a database's schema that a query can observe, in a stable order.
 * @param {D1Executor} db
 */
async function describeSchema(db) {
  const [objects = []] = await db.execute(
    "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations' ORDER BY type, name",
  );
  /** @type {Record<string, unknown>} */
  const tables = {};
  for (const t of objects.filter((o) => o.type === 'table')) {
    const name = String(t.name);
    const [[columns = []], [foreignKeys = []], [indexList = []]] = await Promise.all([
      db.execute(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info('${name}') ORDER BY cid`),
      db.execute(`SELECT "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list('${name}') ORDER BY "from"`),
      db.execute(`SELECT name, "unique", origin, partial FROM pragma_index_list('${name}') ORDER BY name`),
    ]);
    const indexes = [];
    for (const ix of indexList) {
      const [cols = []] = await db.execute(`SELECT name FROM pragma_index_info('${String(ix.name)}') ORDER BY seqno`);
      // Automatic indexes (PRIMARY KEY, UNIQUE) are named by position; identify them by what they cover instead.
      const named = ix.origin === 'c' ? ix.name : `(${ix.origin})`;
      indexes.push({ name: named, unique: ix.unique, partial: ix.partial, columns: cols.map((c) => c.name) });
    }
    indexes.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    tables[name] = { columns, foreignKeys, indexes, checks: checkClauses(String(t.sql)) };
  }
  const others = objects
    .filter((o) => o.type !== 'table' && o.sql !== null)
    .map((o) => ({ type: o.type, name: o.name, on: o.tbl_name, sql: normalize(String(o.sql)) }));
  return { tables, others };
}

/** Whitespace, comments and IF NOT EXISTS do not make two statements different. */
function normalize(/** @type {string} */ sql) {
  return sql
    .replace(/--[^\n]*/g, '')
    .replace(/\bIF NOT EXISTS\b/gi, '')
    .replace(/\s+/g, ' ')
    .replace(/\s*([(),])\s*/g, '$1')
    .trim();
}

/** The CHECK constraints of a CREATE TABLE, normalized and sorted (pragmas do not report them). */
function checkClauses(/** @type {string} */ sql) {
  const text = normalize(sql);
  const out = [];
  for (let i = text.search(/\bCHECK ?\(/i); i >= 0;) {
    const open = text.indexOf('(', i);
    let depth = 0;
    let end = open;
    for (; end < text.length; end++) {
      if (text[end] === '(') depth++;
      else if (text[end] === ')' && --depth === 0) break;
    }
    out.push(text.slice(open, end + 1));
    const next = text.slice(end + 1).search(/\bCHECK ?\(/i);
    i = next < 0 ? -1 : end + 1 + next;
  }
  return out.sort();
}

describe('schema.sql is the snapshot of migrations/', () => {
  /** @type {string[]} */
  const dirs = [];
  /** @type {D1Executor[]} */
  const dbs = [];
  beforeAll(async () => {
    for (const prefix of ['schema-migrated-', 'schema-snapshot-']) {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      dirs.push(dir);
      dbs.push(await openD1({ persistTo: dir }));
    }
  }, 60_000);
  afterAll(async () => {
    await Promise.all(dbs.map((db) => db.close()));
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('the migrations and schema.sql build the same schema', async () => {
    const [migrated, snapshot] = /** @type {[D1Executor, D1Executor]} */ (dbs);
    const applied = await applyMigrations(migrated);
    expect(applied).toEqual((await readMigrations()).map((m) => m.name));
    await snapshot.execute(await readFile(join(ROOT, 'schema.sql'), 'utf8'));
    const [fromMigrations, fromSnapshot] = [await describeSchema(migrated), await describeSchema(snapshot)];
    expect(Object.keys(fromMigrations.tables).length).toBeGreaterThan(10);
    expect(fromSnapshot).toEqual(fromMigrations);
  });

  it('applying again changes nothing (wrangler skips recorded migrations)', async () => {
    const [migrated] = /** @type {[D1Executor]} */ (dbs);
    expect(await applyMigrations(migrated)).toEqual([]);
  });

  // Numbers are handed out to parallel work in advance, so one can land before a lower one: a gap is allowed, a
  // repeat or an unnumbered file is not (wrangler applies by name, in file order).
  it('migration files are numbered without repeats', async () => {
    const numbers = (await readMigrations()).map((m) => Number.parseInt(m.name.split('_')[0] ?? '', 10));
    expect(numbers.every((n) => Number.isSafeInteger(n) && n > 0)).toBe(true);
    expect(new Set(numbers).size).toBe(numbers.length);
    expect(numbers[0]).toBe(1);
  });
});
