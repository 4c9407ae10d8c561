import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { DEV_PROJECT } from './dev/warehouse/demo-data.mjs';
import { SuiteSequencer } from './test/sequencer.ts';
import { TEST_WEBHOOK_SECRET } from './test/node/webhook-receiver.mjs';

/**
 * Files that leave their isolate unusable for the files after them (the SQL parser's trapped WebAssembly
 * instance fails closed for the rest of the isolate, on purpose): they get a workerd of their own.
 */
const OWN_ISOLATE = ['test/sql-guard-trap.test.ts'];

/**
 * Files that run queries past the deadlines on purpose (long queries, MCP tasks): they run where the deadlines are a
 * few seconds, not production's 30 s and 25 s, so a query that outlives QUERY_TIMEOUT_MS takes seconds of the
 * suite's time, not a minute. Their tests read the deadlines from `env`, never assume production's.
 */
const SHORT_DEADLINES = ['test/*long*.test.ts', 'test/query-jobs*.test.ts', 'test/mcp-tasks*.test.ts'];
const SHORT_DEADLINE_BINDINGS = {
  // Long enough for any ordinary query on a loaded machine (the local warehouse answers in well under a second).
  QUERY_TIMEOUT_MS: '8000',
  LONG_QUERY_WAIT_MS: '2500',
};

/** The D1 migrations, applied by test/worker-setup.ts to each file's empty database (as `wrangler d1 migrations apply`). */
const migrations = await readD1Migrations('./migrations');

/**
 * A project whose tests run inside workerd with the real D1, KV and Durable Object bindings of wrangler.toml.
 * Variables that point at the local warehouse (started once by test/global-setup.ts on a free loopback port)
 * arrive through vitest's provide/inject. Each file starts with empty storage and the schema
 * (test/worker-setup.ts).
 */
function workersProject(
  name: string,
  isolate: boolean,
  include: string[],
  exclude: string[],
  extraBindings: Record<string, string> = {},
): TestProjectInlineConfiguration {
  return {
    plugins: [
      cloudflareTest(({ inject }) => ({
        main: './src/index.ts',
        wrangler: { configPath: './wrangler.toml' },
        miniflare: {
          bindings: {
            BIGQUERY_API_BASE: inject('warehouseUrl'),
            // The project the local warehouse hosts the datasets under (test/global-setup.ts), never `service-v1`.
            BIGQUERY_PROJECT: DEV_PROJECT,
            GCP_SERVICE_ACCOUNT_JSON: inject('serviceAccountJson'),
            // Tests change keys in D1 directly and expect the next request to see it; the cache has its own test.
            AUTH_CACHE_TTL_MS: '0',
            CATALOG_CACHE_TTL_MS: '0',
            CURSOR_SECRET: 'test-cursor-secret-0123456789abcdef0123456789abcdef',
            SESSION_SECRET: 'test-session-secret-0123456789abcdef0123456789abcdef',
            // Seals organizations' webhooks (and brand credentials, whose tests pass their own keys).
            CREDENTIALS_KEY: 'test-credentials-key-0123456789abcdef0123456789abcdef',
            TEST_MIGRATIONS: migrations,
            // Filed reports are posted to the loopback receiver; retries come after 1 s, 2 s (not 30 s, 60 s).
            FEEDBACK_WEBHOOK_URL: `${inject('webhookUrl')}/hook`,
            // Deliveries are signed with it; the receiver verifies them with the documented receiver's function.
            FEEDBACK_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
            // Links in notifications come from here only, never from a request's Host.
            CONSOLE_ORIGIN: 'https://console.test',
            FEEDBACK_WEBHOOK_RETRY_SECONDS: '1',
            FEEDBACK_WEBHOOK_MAX_ATTEMPTS: '4',
            // Tests read query_log right after a request; test/query-log-queue.test.ts runs the queued delivery.
            QUERY_LOG_DELIVERY: 'direct',
            ...extraBindings,
          },
        },
      })),
    ],
    // 20 s, not vitest's 5 s: whole flows (OAuth, sign-in, bursts) take a few seconds alone and several times that on a
    // loaded 2-core machine, where the 5 s default failed them at random.
    // Hooks get the same room as tests: a file's beforeAll (seeding, connecting clients) waits on the same loaded machine.
    test: { name, isolate, include, exclude, setupFiles: ['./test/worker-setup.ts'], testTimeout: 20_000, hookTimeout: 20_000 },
  };
}

// Four projects:
// - "workers": the Worker's tests. Files share one workerd per vitest worker (isolate: false): starting workerd
//   and loading vitest and the Worker into it costs about 3 s of CPU, which per file was most of the suite's
//   time. Storage is wiped between files; module state (caches keyed by their inputs) is shared, as in a
//   long-lived isolate in production. The pool (0.15.1) made each SELF.fetch slower than the one before it in
//   the same workerd (one more Proxy around the entrypoint's prototype per request); test/worker-setup.ts keeps
//   that to one Proxy, so a request's cost no longer depends on how many files ran before it.
// - "workers-own-isolate": the OWN_ISOLATE files, each in a fresh workerd.
// - "workers-short-deadlines": the SHORT_DEADLINES files, sharing a workerd as "workers" does, with the
//   deadlines of SHORT_DEADLINE_BINDINGS.
// - "node": tests of the Node-side tooling (local warehouse, dialect rewrite, admin CLI, `npm run dev`, MCP
//   conformance) and browser tests.
export default defineConfig({
  test: {
    globalSetup: ['./test/global-setup.ts'],
    // Files wait a lot (on workerd, wrangler, the warehouse, a browser): three at a time keep 2 cores busy. Tests
    // are built to share the warehouse (faults and request logs are matched to each test's own labels) and use
    // free ports and temp dirs.
    maxWorkers: 3,
    sequence: { sequencer: SuiteSequencer },
    projects: [
      workersProject('workers', false, ['test/**/*.test.ts'], ['test/node/**', ...OWN_ISOLATE, ...SHORT_DEADLINES]),
      workersProject('workers-own-isolate', true, OWN_ISOLATE, []),
      workersProject('workers-short-deadlines', false, SHORT_DEADLINES, [], SHORT_DEADLINE_BINDINGS),
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/node/**/*.test.{ts,mjs}'],
          // One `npm run dev` for the files that only need a running service, started when the first asks for it.
          globalSetup: ['./test/node/shared-dev-setup.mjs'],
          testTimeout: 60_000,
          // vitest's default hook timeout is 10 s: a beforeAll that starts a warehouse, wrangler or a browser took longer
          // than that on a loaded machine ("Hook timed out in 10000ms" in bigquery-contract.test.mjs).
          hookTimeout: 120_000,
          // One forked worker runs file after file (vitest's default forks a fresh one per file): about 10 s of CPU
          // less per run. The files hold no module state between them (each starts its own servers, temp dirs
          // and ports, and stops them in afterAll).
          isolate: false,
        },
      },
    ],
  },
});
