// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in devDependencies) against our
// endpoint under `npm run dev`, for the 2026-07-28 era and the 2025 era. Every scenario and check that applies
// to a read-only tools server must pass; the ones that cannot apply are listed below with the reason (and in
// docs/mcp.md). The runner needs Node 22: on Node 22 or newer it runs on the Node running the tests; on Node 20
// the `node` package from npm provides one, installed once per user into ~/.cache (XDG_CACHE_HOME), outside the
// checkout so a fresh clone reuses it (not as a devDependency: its `node` bin would shadow the system Node for
// every npm script). The suite sends no credentials, so a loopback proxy adds the bearer.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/lib/import-ts.mjs';
import { devFetch, READY_TIMEOUT_MS, sharedDevInstance } from './mcp-dev-instance.mjs';

const run = promisify(execFile);

const NODE_VERSION = '22.23.3';
const NODE_DIR = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'warehouse-query-api', `conformance-node-${NODE_VERSION}`);
/** The Node that runs the runner: this one when it is 22 or newer, else the cached one. */
const NODE_BIN = Number(process.versions.node.split('.')[0]) >= 22 ? process.execPath : join(NODE_DIR, 'node_modules/node/bin/node');
const RUNNER = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const SCENARIO_TIMEOUT_MS = 30_000;
/** A whole suite (every scenario of a protocol revision, one after another) takes seconds; a hung one is cut. */
const SUITE_TIMEOUT_MS = 150_000;

/**
 * The scenarios that apply to this server, per protocol revision. Left out, because they need what a read-only
 * warehouse API does not offer (documented in docs/mcp.md):
 * - tools-call-* (simple-text, image, audio, embedded-resource, mixed-content, error, with-logging, with-progress,
 *   sampling, elicitation), json-schema-2020-12, elicitation-*: they call the suite's own fixture tools
 *   (`test_simple_text`, ...), which a real server does not have; our tools are called by tests/mcp-*.
 * - resources-*, prompts-*, sep-2164-resource-not-found, completion-complete, logging-set-level: no resources,
 *   prompts, completions or logging capability.
 * - server-sse-polling, server-session-lifecycle: sessions and SSE resumption; the endpoint is stateless JSON.
 * - The Tasks extension's (io.modelcontextprotocol/tasks, run one by one with --force: an extension is on no
 *   revision's timeline): tasks-lifecycle, tasks-wire-fields, tasks-request-state-removal, tasks-mrtr-input,
 *   tasks-mrtr-composition, tasks-required-task-error call only the suite's fixture tools (`greet`, `slow_compute`,
 *   `failing_job`, `protocol_error_job`, `test_tool_with_task`), which a warehouse API does not have (ours never
 *   requires a task or asks for input); tasks-status-notifications is skipped by the runner itself. Our tasks are
 *   proven by test/mcp-tasks.test.ts on both eras' wire. The three below run for the checks that need only ours.
 */
const SCENARIOS = {
  '2026-07-28': [
    'server-stateless',
    'tools-list',
    'caching',
    'http-header-validation',
    'server-sse-multiple-streams',
    'dns-rebinding-protection',
    'tasks-capability-negotiation',
    'tasks-dispatch-and-envelope',
    'tasks-request-headers',
  ],
  '2025-11-25': ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'],
  '2025-06-18': ['server-initialize', 'ping', 'tools-list'],
};

/** Checks inside an applicable scenario that exercise something we do not offer: id -> why. */
const NOT_APPLICABLE_CHECKS = {
  'sep-2549-prompts-list-caching-hints': 'no prompts (prompts/list is -32601)',
  'sep-2549-resources-list-caching-hints': 'no resources (resources/list is -32601)',
  'sep-2549-resources-templates-list-caching-hints': 'no resources',
  'sep-2575-server-rejects-undeclared-capability': "needs the suite's fixture tool test_missing_capability",
  'sep-2575-missing-capability-http-400': "needs the suite's fixture tool test_missing_capability",
  'sep-2575-http-server-no-independent-requests-on-stream': "needs the suite's fixture tool test_streaming_elicitation",
  'sep-2575-server-no-log-without-loglevel': "needs the suite's fixture tool test_logging_tool",
  'sep-2663-server-rejects-undeclared-client': "needs the suite's fixture tool slow_compute",
  'tasks-per-request-meta-opt-in': "needs the suite's fixture tool slow_compute",
  'tasks-server-directed-creation-no-hint': "needs the suite's fixture tool failing_job",
  'sep-2663-legacy-task-param-ignored': "needs the suite's fixture tool greet",
  'tasks-immediate-result-shortcut': "needs the suite's fixture tool slow_compute",
  'tasks-result-type-complete-on-non-task-responses': "needs the suite's fixture tool greet",
  'sep-2663-durable-create-strong-consistency': "needs the suite's fixture tool slow_compute",
  'tasks-headers-tolerate-mcp-method-on-tools-call': "needs the suite's fixture tool greet",
  'sep-2663-routing-headers-accepted-on-tasks-get': "needs the suite's fixture tool slow_compute",
  'sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get': "needs a task of the suite's fixture tool slow_compute",
  // The front door refuses every browser Origin not in ALLOWED_ORIGINS, which is empty by default: a localhost
  // page is refused too until it is allowlisted (docs/oauth.md). The rebinding attack itself is refused (checked).
  'localhost-host-valid-accepted': 'deliberate: the Origin allowlist is empty by default, localhost included',
};

const PASSING = new Set(['SUCCESS', 'INFO', 'SKIPPED', 'WARNING']);

let dev;
let proxy;
let proxyUrl;
let outDir;

/** Node 22 for the runner, from the npm registry (cached after the first run), unless the tests run on 22 or newer. */
async function ensureNode22() {
  if (NODE_BIN === process.execPath) return;
  if (existsSync(NODE_BIN)) {
    const { stdout } = await run(NODE_BIN, ['--version']);
    if (stdout.trim() === `v${NODE_VERSION}`) return;
  }
  await rm(NODE_DIR, { recursive: true, force: true });
  await run('npm', ['install', '--prefix', NODE_DIR, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `node@${NODE_VERSION}`], {
    cwd: ROOT,
    timeout: 180_000,
  });
}

/** Forwards /mcp to the instance's MCP endpoint with the brand key as bearer; drops hop-by-hop headers. */
function startProxy(target, key) {
  const hopByHop = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'content-encoding']);
  const server = createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !hopByHop.has(k)));
      const upstream = await devFetch(`${target}/v1/data/mcp`, {
        method: req.method,
        headers: { ...headers, authorization: `Bearer ${key}` },
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks),
      });
      res.writeHead(upstream.status, Object.fromEntries([...upstream.headers].filter(([k]) => !hopByHop.has(k))));
      res.end(Buffer.from(await upstream.arrayBuffer()));
    } catch (err) {
      res.writeHead(502).end(String(err));
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * Every scenario of `version` in one runner process (`--suite all`: a process per scenario cost a second of CPU
 * each to load the runner), their checks by scenario name. The scenarios that do not apply run too, in about a
 * second in all; only the SCENARIOS' checks are asserted.
 * @param {string} version
 * @returns {Promise<Map<string, any[]>>}
 */
async function runSuite(version, suite) {
  const dir = join(outDir, `${version}-${suite}`);
  const args = [
    RUNNER,
    'server',
    '--url',
    proxyUrl,
    // An extension's scenario is on no revision's timeline: the runner skips it at a --spec-version unless forced.
    ...(suite === 'all' ? ['--suite', 'all'] : ['--scenario', suite, '--force']),
    '--spec-version',
    version,
    '--timeout',
    String(SCENARIO_TIMEOUT_MS),
    '-o',
    dir,
  ];
  let output = '';
  try {
    ({ stdout: output } = await run(NODE_BIN, args, { cwd: ROOT, timeout: SUITE_TIMEOUT_MS }));
  } catch (err) {
    // The runner exits non-zero when a check fails (the scenarios that do not apply fail); the files say which.
    output = `${err.stdout ?? ''}${err.stderr ?? ''}`;
  }
  const byScenario = new Map();
  for (const name of await readdir(dir).catch(() => [])) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(name)?.[1];
    if (scenario) byScenario.set(scenario, JSON.parse(await readFile(join(dir, name, 'checks.json'), 'utf8')));
  }
  if (byScenario.size === 0) throw new Error(`conformance runner wrote no results for ${version}:\n${output}`);
  return byScenario;
}

/** One suite run per protocol revision and suite, shared by its scenarios' tests. @type {Map<string, Promise<Map<string, any[]>>>} */
const suites = new Map();

/**
 * The checks of one scenario of `version` (`all` is the core scenarios; the extensions', tasks-*, are their own suite).
 * @param {string} version @param {string} scenario
 */
async function runScenario(version, scenario) {
  const suite = scenario.startsWith('tasks-') ? scenario : 'all';
  const key = `${version} ${suite}`;
  if (!suites.has(key)) suites.set(key, runSuite(version, suite));
  const checks = (await suites.get(key))?.get(scenario);
  if (!checks) throw new Error(`the conformance runner did not run ${scenario} for ${version}`);
  return checks;
}

beforeAll(async () => {
  await ensureNode22();
  dev = await sharedDevInstance();
  proxy = await startProxy(dev.baseUrl, dev.keys.brand);
  proxyUrl = `http://127.0.0.1:${proxy.address().port}/mcp`;
  outDir = await mkdtemp(join(tmpdir(), 'wq-mcp-conformance-out-'));
}, READY_TIMEOUT_MS + 240_000);

afterAll(async () => {
  await /** @type {Promise<void>} */ (new Promise((resolve) => (proxy ? proxy.close(() => resolve()) : resolve())));
  if (outDir) await rm(outDir, { recursive: true, force: true });
}, 60_000);

describe.each(Object.entries(SCENARIOS))('MCP conformance suite, protocol %s', (version, scenarios) => {
  it.each(scenarios)(
    '%s: every applicable check passes',
    async (scenario) => {
      const checks = await runScenario(version, scenario);
      expect(checks.length, `${scenario} ran no checks`).toBeGreaterThan(0);
      const failed = checks.filter((c) => !PASSING.has(c.status) && !(c.id in NOT_APPLICABLE_CHECKS));
      expect(failed.map((c) => `${c.id}: ${c.errorMessage ?? c.status}`)).toEqual([]);
      expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThan(0);
    },
    SUITE_TIMEOUT_MS + 5_000,
  );
});
