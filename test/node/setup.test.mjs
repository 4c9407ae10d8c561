// `npm run setup` against a stand-in wrangler on PATH (test/node/stand-in-wrangler: records every command line,
// answers as wrangler does, no network): every command of docs/deploy.md (setup's dry run, first deploy, upgrade
// and staging, the admin ones between them) followed step by step in one workspace, a failure halfway that a
// rerun finishes, no login, and the predeploy check.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccount } from '../../dev/warehouse/service-account.mjs';
import { importWorkerModules, ROOT } from '../../scripts/lib/import-ts.mjs';
import { startD1Server } from './stand-in-wrangler/d1-server.mjs';

const run = promisify(execFile);
const STAND_IN_BIN = join(ROOT, 'test', 'node', 'stand-in-wrangler', 'bin');
const LOGIN = {
  email: 'ops@example.com',
  authType: 'OAuth Token',
  tokenPermissions: ['account:read', 'user:read', 'workers:write', 'workers_kv:write', 'workers_scripts:write', 'd1:write'],
  accounts: [{ id: 'acc1', name: 'Example' }],
};
/** @type {string[]} */
const dirs = [];
/** The stand-in's databases, opened once for the file instead of once per wrangler command. */
/** @type {Awaited<ReturnType<typeof startD1Server>> | undefined} */
let d1Server;
beforeAll(async () => {
  d1Server = await startD1Server();
});
afterAll(async () => {
  await d1Server?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** A throwaway checkout's view: a copy of wrangler.toml, the migrations, a key file, an empty account. */
async function workspace(login = /** @type {object | null} */ (LOGIN)) {
  const dir = await mkdtemp(join(tmpdir(), 'setup-test-'));
  dirs.push(dir);
  await copyFile(join(ROOT, 'wrangler.toml'), join(dir, 'wrangler.toml'));
  await symlink(join(ROOT, 'migrations'), join(dir, 'migrations'));
  await writeFile(join(dir, 'service-account.json'), createServiceAccount().json);
  const stateFile = join(dir, 'account.json');
  await writeFile(stateFile, JSON.stringify({ login, d1: [], kv: [], workers: {}, calls: [] }));
  return {
    dir,
    state: async () => /** @type {any} */ (JSON.parse(await readFile(stateFile, 'utf8'))),
    toml: () => readFile(join(dir, 'wrangler.toml'), 'utf8'),
    /**
     * `npm run setup -- ...args` in the workspace, on its wrangler.toml, with the stand-in first on PATH.
     * @param {string[]} args @param {Record<string, string>} [env]
     */
    async setup(args, env = {}) {
      const r = await run(process.execPath, [join(ROOT, 'scripts', 'setup.mjs'), ...args, '--config', join(dir, 'wrangler.toml')], {
        cwd: dir,
        env: {
          ...process.env,
          PATH: `${STAND_IN_BIN}${delimiter}${process.env.PATH}`,
          STAND_IN_WRANGLER_STATE: stateFile,
          STAND_IN_WRANGLER_D1: d1Server?.url ?? '',
          WRANGLER_BIN: '',
          ...env,
        },
        maxBuffer: 1 << 24,
      }).then(
        (ok) => ({ code: 0, out: ok.stdout + ok.stderr }),
        (e) => ({ code: /** @type {number} */ (e.code), out: `${e.stdout}${e.stderr}` }),
      );
      return r;
    },
  };
}

/** Command lines that change something in the account (not whoami or a list). */
const changes = (/** @type {any} */ s) =>
  s.calls
    .map((/** @type {any} */ c) => c.argv.filter((/** @type {string} */ a) => !a.startsWith('/')).join(' '))
    .filter(
      (/** @type {string} */ l) =>
        !/^(whoami|d1 list|kv namespace list|secret list)/.test(l) && !/d1 execute DB .*--command SELECT/i.test(l),
    );

// Concurrent: each test has its own workspace and account.
describe.concurrent('npm run setup, as docs/deploy.md runs it', () => {
  it('a failure halfway (the deploy) stops with the step named; a rerun finishes without redoing the rest', async () => {
    const w = await workspace();
    const args = ['--service-account', 'service-account.json', '--project', 'example-analytics'];
    const failed = await w.setup(args, { STAND_IN_WRANGLER_FAIL: 'deploy' });
    expect(failed.code).toBe(1);
    expect(failed.out).toMatch(/\[deploy\] `wrangler deploy .*` failed/);
    expect(failed.out).toContain('setup stopped');
    let s = await w.state();
    expect(s.workers).toEqual({});
    const key = (await readFile(join(w.dir, '.deploy', 'production', 'credentials-key'), 'utf8')).trim();

    const resumed = await w.setup(args, { STAND_IN_WRANGLER_FAIL: 'deploy' });
    expect(resumed.code, resumed.out).toBe(0);
    s = await w.state();
    expect(changes(s).filter((/** @type {string} */ l) => l.startsWith('d1 create') || l.startsWith('kv namespace create'))).toHaveLength(
      2,
    );
    expect(resumed.out).toMatch(/\[d1\] database warehouse-query-api exists .* nothing to do/);
    expect(s.workers['warehouse-query-api'].secrets.CREDENTIALS_KEY).toBe(key);
    expect(resumed.out).toMatch(/no administrator yet: rerun with --admin-email/);
  }, 600_000);

  it('without a login it stops at the first step and changes nothing', async () => {
    const w = await workspace(null);
    const r = await w.setup([]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/\[login\] not logged in to Cloudflare: run `npx wrangler login`/);
    expect((await w.state()).calls.map((/** @type {any} */ c) => c.argv[0])).toEqual(['whoami']);
  }, 60_000);

  it('--dry-run without a login prints every step, "needs login to check" where only the account knows', async () => {
    const w = await workspace(null);
    const r = await w.setup(['--dry-run', '--project', 'example-analytics']);
    expect(r.code, r.out).toBe(0);
    for (const step of ['login', 'config', 'warehouse', 'd1', 'kv', 'queues', 'migrations', 'secrets', 'console', 'deploy', 'admin'])
      expect(r.out, step).toContain(`[${step}]`);
    expect(r.out).toMatch(/\[d1\] needs login to check whether database warehouse-query-api exists/);
    expect(r.out).toMatch(/\[kv\] needs login to check/);
    expect(r.out).toMatch(/\[secrets\] needs login to check/);
    expect(r.out).toContain('[warehouse] would record BIGQUERY_PROJECT = "example-analytics" (from --project)');
    expect(r.out).toMatch(/\[done\] dry run: nothing was changed/);
    // Only whoami was asked; nothing written.
    expect((await w.state()).calls.map((/** @type {any} */ c) => c.argv[0])).toEqual(['whoami']);
    expect(await w.toml()).toBe(await readFile(join(ROOT, 'wrangler.toml'), 'utf8'));
  }, 60_000);

  it.each([
    [[], /BIGQUERY_PROJECT "demo-analytics-dev" is the demo project .*give --project YOUR_PROJECT/],
    [['--project', 'service-v1'], /"service-v1" is the contract's table prefix/],
    [['--service-account', 'service-account.json'], /from the service account's project_id: "service-v1" is the contract's table prefix/],
    [['--project', 'Not A Project'], /is not a Google Cloud project id/],
  ])(
    'refuses a placeholder project before changing anything (%j)',
    async (args, message) => {
      const w = await workspace();
      const r = await w.setup(args);
      expect(r.code).toBe(1);
      expect(r.out).toMatch(message);
      expect(changes(await w.state())).toEqual([]);
      expect(await w.toml()).toBe(await readFile(join(ROOT, 'wrangler.toml'), 'utf8'));
    },
    60_000,
  );

  it('takes the project from the service account, records project, location and console origin in wrangler.toml', async () => {
    const w = await workspace();
    await writeFile(join(w.dir, 'sa.json'), createServiceAccount({ projectId: 'acme-warehouse' }).json);
    const r = await w.setup(['--service-account', 'sa.json', '--location', 'EU', '--console-origin', 'https://data.example.com']);
    expect(r.code, r.out).toBe(0);
    const toml = await w.toml();
    const vars = toml.slice(toml.indexOf('[vars]'), toml.indexOf('\n[', toml.indexOf('[vars]') + 1));
    expect(vars).toContain('BIGQUERY_PROJECT = "acme-warehouse"');
    expect(vars).toContain('BIGQUERY_LOCATION = "EU"');
    expect(vars).toContain('CONSOLE_ORIGIN = "https://data.example.com"');
    expect(r.out).toContain(`BIGQUERY_PROJECT = "acme-warehouse" (from the service account's project_id), recorded at wrangler.toml:`);
    // The console origin was known before the deploy: one deploy.
    expect((await w.state()).workers['warehouse-query-api'].deployments).toBe(1);
    expect((await w.setup(['--location', 'moon'])).out).toMatch(/BIGQUERY_LOCATION "moon" is not a BigQuery location/);
  }, 120_000);

  it('an OAuth login without d1:write is refused, naming the permission', async () => {
    const w = await workspace({ ...LOGIN, tokenPermissions: LOGIN.tokenPermissions.filter((p) => p !== 'd1:write') });
    const r = await w.setup([]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/lacks the permissions d1:write/);
  }, 60_000);
});

describe('npm run deploy refuses placeholder ids before any upload', () => {
  it('names the line to fix, per environment', async () => {
    const w = await workspace();
    const check = (/** @type {string[]} */ extra) =>
      run(process.execPath, [join(ROOT, 'scripts', 'deploy.mjs'), '--check-only', '--config', join(w.dir, 'wrangler.toml'), ...extra], {
        cwd: w.dir,
        env: { ...process.env, WRANGLER_BIN: join(w.dir, 'no-wrangler-here') },
      }).then(
        () => ({ code: 0, out: '' }),
        (e) => ({ code: e.code, out: `${e.stdout}${e.stderr}` }),
      );
    const toml = await w.toml();
    const line = toml.split('\n').findIndex((l) => l.startsWith('database_id = "00000000')) + 1;
    const top = await check([]);
    expect(top.code).toBe(1);
    expect(top.out).toContain(`wrangler.toml:${line}: database_id of DB is the placeholder`);
    const staging = await check(['--env', 'staging']);
    expect(staging.out).toMatch(/database_id of DB of \[env\.staging\] is the placeholder/);
    // A staging section that drops a binding the top level has is named too.
    await writeFile(join(w.dir, 'wrangler.toml'), toml.replace(/\[\[env\.staging\.ratelimits\]\]\nname = "TOKEN_LIMITER"[^[]*/, ''));
    expect((await check(['--env', 'staging'])).out).toMatch(/\[env\.staging\] lacks the \[\[ratelimits\]\] binding TOKEN_LIMITER/);
  }, 60_000);
});

/**
 * Every command line of docs/deploy.md's shell blocks, in order, split at `&&` and as a shell splits words, each
 * with what the test does with it: `npm run setup` and `npm run admin` run; the few a test cannot run on a
 * throwaway workspace are listed in SKIPPED with the reason, and any other command fails the test, so a command
 * added to the page is either run here or skipped on purpose.
 */
const SKIPPED = {
  'git pull': 'updates the checkout the test runs from',
  'npm ci': 'reinstalls the node_modules the test runs on',
};
async function docSteps() {
  const doc = await readFile(join(ROOT, 'docs', 'deploy.md'), 'utf8');
  return [...doc.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((m) => (m[1] ?? '').split('\n'))
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l !== '')
    .flatMap((l) => l.split('&&').map((c) => c.trim()))
    .map((line) => {
      const words = [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
      const script = /^npm run (setup|admin)$/.exec(words.slice(0, 3).join(' '))?.[1];
      const args = words.slice(3).filter((a, i) => !(i === 0 && a === '--'));
      const skipped = Object.entries(SKIPPED).find(([prefix]) => line === prefix || line.startsWith(`${prefix} `));
      return { line, script, args, skipped: skipped?.[1] };
    });
}

/** @typedef {Awaited<ReturnType<typeof workspace>>} Workspace */

/**
 * What each `npm run setup` of docs/deploy.md must have done, in the page's order: the dry run, the first deploy,
 * the upgrade (a rerun after the tenants were added) and staging. Each gets the workspace, the command's output
 * and the changing commands it sent to the account.
 * @type {((w: Workspace, out: string, sent: string[]) => Promise<void>)[]}
 */
const SETUP_CHECKS = [
  async (w, out, sent) => {
    expect(out).toMatch(/\[d1\] would run `wrangler d1 create warehouse-query-api`/);
    expect(out).toContain('[warehouse] BIGQUERY_PROJECT "demo-analytics-dev" is the demo project');
    expect(out).toMatch(/\[done\] dry run: nothing was changed/);
    expect(sent).toEqual([]);
    expect(await w.toml()).toBe(await readFile(join(ROOT, 'wrangler.toml'), 'utf8'));
  },
  async (w, out, sent) => {
    const s = await w.state();
    expect(s.d1.map((/** @type {any} */ x) => x.name)).toEqual(['warehouse-query-api']);
    expect(s.kv.map((/** @type {any} */ x) => x.title)).toEqual(['warehouse-query-api-OAUTH_KV']);
    expect(await w.toml()).toContain(`database_id = "${s.d1[0].uuid}"`);
    expect(await w.toml()).toContain(`id = "${s.kv[0].id}"`);
    const worker = s.workers['warehouse-query-api'];
    expect(Object.keys(worker.secrets).sort()).toEqual(['CREDENTIALS_KEY', 'CURSOR_SECRET', 'GCP_SERVICE_ACCOUNT_JSON', 'SESSION_SECRET']);
    expect(worker.secrets.CREDENTIALS_KEY).toBe((await readFile(join(w.dir, '.deploy', 'production', 'credentials-key'), 'utf8')).trim());
    // The workers.dev URL became CONSOLE_ORIGIN after the first deploy, and a second deploy gave the Worker it.
    expect(worker.deployments).toBe(2);
    expect(await w.toml()).toContain('CONSOLE_ORIGIN = "https://warehouse-query-api.stand-in.workers.dev"');
    expect(await w.toml()).toContain('BIGQUERY_PROJECT = "example-analytics"');
    // No secret was put before the Worker existed: they went up with the deploy.
    expect(sent.filter((l) => l.startsWith('secret put'))).toEqual([]);
    expect(out).toMatch(/\[migrations\] applied 0001_initial\.sql/);
    expect(out).toMatch(/\[admin\] created administrator you@example\.com of org_example; password \(shown once\): \S{12,}/);
    expect(out).toContain('sign in at https://warehouse-query-api.stand-in.workers.dev/admin/login');
  },
  async (w, out, sent) => {
    // Only the deploy itself (an upgrade), without secrets; nothing created, no migration, no administrator.
    expect(sent.filter((l) => !l.startsWith('queues create'))).toEqual([
      expect.stringMatching(/^d1 migrations apply DB --remote/),
      expect.stringMatching(/^deploy --config$/),
    ]);
    expect(out).toMatch(/queue warehouse-query-api-notifications exists: nothing to do/);
    expect(out).toMatch(/nothing to apply/);
    expect(out).toMatch(/CURSOR_SECRET is set: kept/);
    expect(out).toMatch(/\[admin\] the database has 1 administrator login/);
    expect((await w.state()).workers['warehouse-query-api'].deployments).toBe(3);
    expect(out).toMatch(/BIGQUERY_PROJECT is example-analytics \(wrangler\.toml:\d+\): kept/);
  },
  async (w, out, sent) => {
    const s = await w.state();
    expect(s.d1.map((/** @type {any} */ x) => x.name)).toEqual(['warehouse-query-api', 'warehouse-query-api-staging']);
    expect(s.kv.map((/** @type {any} */ x) => x.title)).toContain('warehouse-query-api-staging-OAUTH_KV');
    expect(Object.keys(s.workers).sort()).toEqual(['warehouse-query-api', 'warehouse-query-api-staging']);
    expect(s.queues).toEqual(expect.arrayContaining(['warehouse-query-api-staging-notifications']));
    expect(s.workers['warehouse-query-api-staging'].secrets.CREDENTIALS_KEY).not.toBe(
      s.workers['warehouse-query-api'].secrets.CREDENTIALS_KEY,
    );
    // The first deploy with the secrets; the second with the CONSOLE_ORIGIN that deploy's URL gave.
    expect(sent.filter((l) => l.startsWith('deploy'))).toEqual([
      'deploy --env staging --config --secrets-file',
      'deploy --env staging --config',
    ]);
    expect((await w.toml()).slice((await w.toml()).indexOf('[env.staging.vars]'))).toMatch(
      /^CONSOLE_ORIGIN = "https:\/\/warehouse-query-api-staging\.stand-in\.workers\.dev"$/m,
    );
    expect(out).toContain('https://warehouse-query-api-staging.stand-in.workers.dev/admin/login');
    // Staging has its own project, recorded in its own [env.staging.vars].
    const toml = await w.toml();
    expect(toml.slice(toml.indexOf('[env.staging.vars]'))).toMatch(/^BIGQUERY_PROJECT = "example-analytics-staging"$/m);
  },
];

describe('docs/deploy.md, followed step by step', () => {
  // One workspace through the whole page, as a person follows it; setup's own runs (dry run, first deploy, upgrade,
  // staging) are checked as they happen (SETUP_CHECKS).
  it('runs each of its commands in order against the stand-in: setup, tenants and sealed credentials, upgrade, staging', async () => {
    const steps = await docSteps();
    const unknown = steps.filter((s) => !s.script && !s.skipped).map((s) => s.line);
    expect(unknown, 'commands of docs/deploy.md this test neither runs nor skips on purpose').toEqual([]);
    expect(steps.filter((s) => s.script === 'admin').length).toBeGreaterThanOrEqual(4);

    const w = await workspace();
    const config = join(w.dir, 'wrangler.toml');
    const standIn = {
      ...process.env,
      STAND_IN_WRANGLER_STATE: join(w.dir, 'account.json'),
      STAND_IN_WRANGLER_D1: d1Server?.url ?? '',
      WRANGLER_BIN: join(STAND_IN_BIN, 'wrangler'),
    };
    /** The admin CLI as `npm run admin -- ...args` runs it, on the workspace's wrangler.toml and the stand-in. */
    const admin = (/** @type {string[]} */ args) =>
      run(process.execPath, [join(ROOT, 'scripts', 'admin.mjs'), ...args, ...(args.includes('--remote') ? ['--config', config] : [])], {
        cwd: w.dir,
        env: standIn,
      }).then(
        (ok) => ({ code: 0, out: ok.stdout + ok.stderr }),
        (e) => ({ code: /** @type {number} */ (e.code), out: `${e.stdout}${e.stderr}` }),
      );
    /** @type {Record<string, string>} the service-account files the page names, made here, by name: client_email */
    const accounts = {};
    /** @type {{ line: string, out: string }[]} */
    const ran = [];
    let setupRuns = 0;
    for (const step of steps) {
      if (!step.script) continue;
      for (const [i, a] of step.args.entries()) {
        const file = step.args[i + 1];
        if ((a === '--file' || a === '--service-account') && file && !(file in accounts)) {
          const sa = createServiceAccount({ clientEmail: `${file.replace(/\.json$/, '')}@example-project.iam.gserviceaccount.com` });
          await writeFile(join(w.dir, file), sa.json);
          accounts[file] = sa.clientEmail;
        }
      }
      const before = changes(await w.state()).length;
      const r = step.script === 'setup' ? await w.setup(step.args) : await admin(step.args);
      expect(r.code, `${step.line}\n${r.out}`).toBe(0);
      ran.push({ line: step.line, out: r.out });
      if (step.script === 'setup') await SETUP_CHECKS[setupRuns++]?.(w, r.out, changes(await w.state()).slice(before));
    }
    expect(setupRuns, 'the page runs setup as a dry run, a first deploy, an upgrade and for staging').toBe(SETUP_CHECKS.length);
    const outOf = (/** @type {RegExp} */ re) => ran.find((r) => re.test(r.line))?.out ?? '';

    // The Worker's CREDENTIALS_KEY (it went up with the deploy) is the one setup kept for the CLI, and it opens what
    // `brand credentials set --remote` sealed into the deployed database: the acme-sa.json account, for brand_acme.
    const s = await w.state();
    const secret = s.workers['warehouse-query-api'].secrets.CREDENTIALS_KEY;
    expect((await readFile(join(w.dir, '.deploy', 'production', 'credentials-key'), 'utf8')).trim()).toBe(secret);
    const { stdout } = await run(
      join(STAND_IN_BIN, 'wrangler'),
      ['d1', 'execute', 'DB', '--json', '--remote', '--config', config, '--command', 'SELECT * FROM brand_credentials'],
      { cwd: w.dir, env: standIn },
    );
    const rows = JSON.parse(stdout)[0].results;
    expect(rows.map((/** @type {any} */ r) => [r.brand_id, r.client_email])).toEqual([['brand_acme', accounts['acme-sa.json']]]);
    const { unseal, keyIdOf } = await importWorkerModules({ 'src/warehouse/credential-seal.ts': ['unseal', 'keyIdOf'] });
    const opened = JSON.parse(
      await unseal([secret], 'brand_acme', { keyId: rows[0].key_id, iv: rows[0].iv, ciphertext: rows[0].ciphertext }),
    );
    expect(opened.client_email).toBe(accounts['acme-sa.json']);
    expect(outOf(/brand credentials set/)).toContain(`sealed under key ${await keyIdOf(secret)}`);
    const shown = outOf(/brand credentials show/);
    expect(shown).toContain(accounts['acme-sa.json']);
    expect(shown).toContain('current');
    expect(shown).not.toContain('PRIVATE KEY');
    expect(outOf(/key create/)).toMatch(/wqk_[A-Za-z0-9_-]{43}/);
    // The upgrade deployed again; staging has its own Worker, and its administrator is in its own database.
    expect(s.workers['warehouse-query-api'].deployments).toBe(3);
    expect(s.workers['warehouse-query-api-staging'].deployments).toBe(2);
    expect(outOf(/user list --remote --env staging/)).toContain('you@example.com');
  }, 600_000);
});
