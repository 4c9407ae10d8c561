#!/usr/bin/env node
// `npm run deploy [-- wrangler deploy options]`: refuses a configuration that would fail or misbehave only after
// the upload (placeholder or missing D1/KV ids, an [env.NAME] lacking a binding or variable of the top level),
// naming the line to fix; then builds the MCP Apps views and runs `wrangler deploy` with the same options.
// `npm run setup` runs the same check before it deploys.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './lib/import-ts.mjs';
import { deployConfigProblems } from './lib/wrangler-toml.mjs';

const args = process.argv.slice(2);
const { values } = parseArgs({
  args,
  options: { env: { type: 'string', short: 'e' }, config: { type: 'string', short: 'c' } },
  strict: false,
});
const config = resolve(typeof values.config === 'string' ? values.config : join(ROOT, 'wrangler.toml'));
const env = typeof values.env === 'string' ? values.env : undefined;
const problems = deployConfigProblems(readFileSync(config, 'utf8'), env, relative(process.cwd(), config) || config);
if (problems.length > 0) {
  console.error(`not deploying: the configuration would fail after the upload\n${problems.join('\n')}`);
  process.exit(1);
}
if (args.includes('--check-only')) {
  console.log(`${relative(process.cwd(), config)}${env ? ` [env.${env}]` : ''}: ready to deploy`);
  process.exit(0);
}
const step = (/** @type {string} */ cmd, /** @type {string[]} */ a) => {
  const r = spawnSync(cmd, a, { stdio: 'inherit', env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
step(process.execPath, [join(ROOT, 'scripts', 'build-views.mjs')]);
step(process.env.WRANGLER_BIN || join(ROOT, 'node_modules', '.bin', 'wrangler'), ['deploy', ...args]);
