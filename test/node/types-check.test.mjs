// `npm run types:check` (scripts/types.mjs --check) in a throwaway copy of the checkout's configuration: it passes
// with a .dev.vars beside wrangler.toml (as `npm run dev` leaves one; wrangler's own --check failed there) and
// fails once wrangler.toml declares a variable the committed types do not have.
import { copyFile, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROOT } from '../../scripts/lib/import-ts.mjs';
import { runProcess } from '../../scripts/lib/run-process.mjs';

let dir;

const check = () =>
  runProcess(process.execPath, [join(ROOT, 'scripts/types.mjs'), '--check'], { env: { ...process.env, TYPES_CHECK_ROOT: dir } });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wq-types-check-'));
  for (const file of ['wrangler.toml', 'worker-configuration.d.ts']) await copyFile(join(ROOT, file), join(dir, file));
  for (const link of ['src', 'node_modules', 'dist']) await symlink(join(ROOT, link), join(dir, link));
  await writeFile(
    join(dir, '.dev.vars'),
    'GCP_SERVICE_ACCOUNT_JSON={}\nCURSOR_SECRET=x\nSESSION_SECRET=y\nBIGQUERY_API_BASE=http://127.0.0.1:1\n',
  );
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('passes with a .dev.vars present, and fails when wrangler.toml gains a variable', async () => {
  const clean = await check();
  expect(clean.code, clean.stdout + clean.stderr).toBe(0);

  const toml = await readFile(join(dir, 'wrangler.toml'), 'utf8');
  await writeFile(join(dir, 'wrangler.toml'), toml.replace(/^\[vars\]$/m, '[vars]\nTYPES_CHECK_TEST_VAR = "1"'));
  const stale = await check();
  expect(stale.code).toBe(1);
  expect(stale.stderr).toContain('worker-configuration.d.ts is stale');
}, 60_000);
