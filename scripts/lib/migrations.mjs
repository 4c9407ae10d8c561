// The D1 schema is the numbered files in migrations/, applied in order and recorded in the table `d1_migrations`,
// exactly as `wrangler d1 migrations apply` does (and the test pool's applyD1Migrations): same file order (by the
// number before the first `_`), same statement splitter, same bookkeeping table. So a database set up by any of
// them (npm run dev, the Node tests, a bench, a deploy) can be upgraded by any other.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from './import-ts.mjs';

/** Where the migrations live (wrangler.toml's default `migrations_dir`). */
export const MIGRATIONS_DIR = join(ROOT, 'migrations');

/** wrangler's bookkeeping table, created the way wrangler and the test pool create it. */
export const MIGRATIONS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS d1_migrations (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  name       TEXT UNIQUE,
  applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
)`;

/**
 * The migration files, in the order wrangler applies them.
 * @param {string} [dir]
 * @returns {Promise<{ name: string; sql: string }[]>}
 */
export async function readMigrations(dir = MIGRATIONS_DIR) {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.sql'));
  names.sort((a, b) => Number.parseInt(a.split('_')[0] ?? '', 10) - Number.parseInt(b.split('_')[0] ?? '', 10));
  return Promise.all(names.map(async (name) => ({ name, sql: await readFile(join(dir, name), 'utf8') })));
}

/**
 * The migration names `db` has recorded (none on a database without wrangler's table).
 * @param {import('./d1.mjs').D1Executor} db
 * @returns {Promise<Set<string>>}
 */
async function recordedMigrations(db) {
  const [tables = []] = await db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'd1_migrations'");
  const [applied = []] = tables.length > 0 ? await db.execute('SELECT name FROM d1_migrations') : [];
  return new Set(applied.map((r) => String(r.name)));
}

/**
 * Applies every migration `db` has not recorded yet, each in one batch with its record (all of it or none).
 * For a local database opened in this process; the deployed one is upgraded by `wrangler d1 migrations apply
 * DB --remote`, which keeps the same records.
 * @param {import('./d1.mjs').D1Executor} db
 * @param {string} [dir]
 * @returns {Promise<string[]>} the names applied now
 */
export async function applyMigrations(db, dir = MIGRATIONS_DIR) {
  const done = await recordedMigrations(db);
  await db.execute(MIGRATIONS_TABLE_SQL);
  const now = [];
  for (const m of await readMigrations(dir)) {
    if (done.has(m.name)) continue;
    // The name is a file name from our own folder, but it still goes in as a literal, never raw.
    await db.execute(`${m.sql}\n;\nINSERT INTO d1_migrations (name) VALUES ('${m.name.replaceAll("'", "''")}');`);
    now.push(m.name);
  }
  return now;
}
