// The admin CLI's whole command layer (`runAdmin`) run in this process on an already open local D1, as
// `npm run admin -- ...args --persist-to <stateDir>` would run it: what it prints and its exit code. And the
// throwaway database the admin CLI test files run it on.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { runAdmin } from '../../scripts/admin.mjs';
import { openD1 } from '../../scripts/lib/d1.mjs';
import { applyMigrations } from '../../scripts/lib/migrations.mjs';

/**
 * @param {import('../../scripts/lib/d1.mjs').D1Executor} db the open database the command must use
 * @param {string} stateDir its --persist-to directory
 * @param {string[]} args the command line after `npm run admin --`
 * @returns {Promise<{ code: number; stdout: string; stderr: string }>}
 */
export async function runAdminOn(db, stateDir, args) {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin([...args, '--persist-to', stateDir], {
    // The shared open database; the CLI closes what it opened, so this one's close is a no-op.
    openD1: async (target) => {
      if (target.remote || target.persistTo !== stateDir) throw new Error(`the CLI opened ${JSON.stringify(target)}, not ${stateDir}`);
      return { execute: (s) => db.execute(s), close: async () => {} };
    },
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
    interactive: false,
  });
  return { code, stdout, stderr };
}

/**
 * For one test file: a throwaway local D1 (a temp --persist-to directory with the migrations applied) opened in
 * beforeAll and closed and deleted in afterAll, and the CLI run in-process on it.
 * @param {string} prefix the temp directory's name prefix
 */
export function adminTestDatabase(prefix) {
  /** @type {string | undefined} */
  let stateDir;
  /** @type {import('../../scripts/lib/d1.mjs').D1Executor | undefined} */
  let db;
  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), prefix));
    db = await openD1({ persistTo: stateDir });
    await applyMigrations(db);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  });
  const opened = () => {
    if (!db || !stateDir) throw new Error('the admin test database is opened in beforeAll');
    return { db, stateDir };
  };
  return {
    /** Its --persist-to directory. */
    get stateDir() {
      return opened().stateDir;
    },
    /**
     * Runs one CLI invocation on it, as `npm run admin -- ...args --persist-to <temp>` would.
     * @param {...string} args
     */
    admin: (...args) => runAdminOn(opened().db, opened().stateDir, args),
    /**
     * Runs one invocation with --json, expects it to succeed quietly, and returns what it printed, parsed.
     * @param {...string} args
     */
    async adminJson(...args) {
      const r = await runAdminOn(opened().db, opened().stateDir, [...args, '--json']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      return JSON.parse(r.stdout);
    },
    /**
     * The rows of the last statement.
     * @param {string} statement
     */
    async rows(statement) {
      const results = await opened().db.execute(statement);
      return results[results.length - 1] ?? [];
    },
  };
}
