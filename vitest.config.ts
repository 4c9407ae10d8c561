import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

// Two projects:
// - "workers": tests run inside workerd with the real D1, KV and Durable Object bindings of wrangler.toml.
//   Variables that point at the local warehouse (started once by test/global-setup.ts on a free loopback
//   port) arrive through vitest's provide/inject.
// - "node": tests of the Node-side tooling in dev/ (local warehouse, dialect rewrite) and browser tests.
export default defineConfig({
  test: {
    globalSetup: ['./test/global-setup.ts'],
    // vitest's default on a 2-core machine is one file at a time. Two overlap a workers file's workerd start with
    // a node file waiting on wrangler, the warehouse or a browser; tests are built to share the warehouse (faults
    // and request logs are matched to each test's own labels) and use free ports and temp dirs.
    maxWorkers: 2,
    projects: [
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            main: './src/index.ts',
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: {
                BIGQUERY_API_BASE: inject('warehouseUrl'),
                GCP_SERVICE_ACCOUNT_JSON: inject('serviceAccountJson'),
                // Tests change keys in D1 directly and expect the next request to see it; the cache has its own test.
                AUTH_CACHE_TTL_MS: '0',
                CATALOG_CACHE_TTL_MS: '0',
                CURSOR_SECRET: 'test-cursor-secret-0123456789abcdef0123456789abcdef',
                SESSION_SECRET: 'test-session-secret-0123456789abcdef0123456789abcdef',
              },
            },
          })),
        ],
        test: {
          name: 'workers',
          include: ['test/**/*.test.ts'],
          exclude: ['test/node/**'],
          setupFiles: ['./test/apply-schema.ts'],
        },
      },
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/node/**/*.test.{ts,mjs}'],
          testTimeout: 60_000,
        },
      },
    ],
  },
});
