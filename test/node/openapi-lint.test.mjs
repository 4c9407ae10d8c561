// The served OpenAPI document passes `@redocly/cli lint` and Spectral's `spectral:oas` ruleset. The document is taken from the real Worker: the same
// bundle `wrangler deploy` would upload (built with --dry-run), run in workerd through Miniflare, so what is
// linted is byte for byte what /v1/data/openapi.json serves, with no shims for the Workers runtime.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';
import spectralCore from '@stoplight/spectral-core';
import { Json } from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../scripts/lib/run-process.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs a Node script to completion; resolves with its exit code and output. */
function runNode(args) {
  return runProcess(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: 'false',
      REDOCLY_TELEMETRY: 'off',
      REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      NO_COLOR: '1',
    },
  });
}

let dir;
let mf;
let served;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
  const bundleDir = join(dir, 'bundle');
  const build = await runNode([join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', bundleDir]);
  if (build.code !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${build.stdout}\n${build.stderr}`);

  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(ROOT, 'wrangler.toml'));
  mf = new Miniflare({
    ...workerOptions,
    name: 'openapi-lint',
    modules: true,
    scriptPath: join(bundleDir, 'index.js'),
    modulesRoot: bundleDir,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'], fallthrough: true }],
  });
  const res = await mf.dispatchFetch('http://api.test/v1/data/openapi.json');
  served = { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}, 120_000);

afterAll(async () => {
  await mf?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('served OpenAPI document', () => {
  it('is served without a key as OpenAPI 3.1.0 JSON', () => {
    expect(served.status).toBe(200);
    expect(served.contentType).toMatch(/^application\/json/);
    expect(JSON.parse(served.text)).toMatchObject({ openapi: '3.1.0', info: { version: '1.0.0' } });
  });

  it('passes @redocly/cli lint (recommended-strict: any warning is an error)', async () => {
    const file = join(dir, 'openapi.json');
    const config = join(dir, 'redocly.yaml');
    await writeFile(file, served.text);
    // info-license is off: the API is private and publishes no licence, and inventing one would be worse.
    await writeFile(config, 'extends:\n  - recommended-strict\nrules:\n  info-license: off\n');
    const lint = await runNode([join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', file, '--config', config, '--format', 'json']);
    const report = JSON.parse(lint.stdout.slice(lint.stdout.indexOf('{')));
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${JSON.stringify(p.location?.[0]?.pointer)}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(lint.code, lint.stderr).toBe(0);
  }, 60_000);

  // Spectral's `spectral:oas` (the ruleset `spectral lint` applies by default, and many client generators' users run)
  // is `oas` of @stoplight/spectral-rulesets, run here through spectral-core as the CLI runs it: every result at any
  // severity (error, warning, info, hint) counts.
  it("passes Spectral's spectral:oas ruleset with no result of any severity", async () => {
    const spectral = new spectralCore.Spectral();
    // The rulesets package declares `oas` with a narrower type than spectral-core's RulesetDefinition accepts.
    spectral.setRuleset({ extends: [/** @type {import('@stoplight/spectral-core').RulesetDefinition} */ (/** @type {unknown} */ (oas))] });
    const results = await spectral.run(new spectralCore.Document(served.text, Json, 'openapi.json'));
    const severity = ['error', 'warning', 'info', 'hint'];
    expect(results.map((r) => `${severity[r.severity]} ${r.code}: ${r.message} at ${r.path.join('.')}`)).toEqual([]);
  }, 60_000);
});
