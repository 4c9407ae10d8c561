import type { D1Migration } from 'cloudflare:test';
import type { Secrets } from '../src/env';

// `env` from cloudflare:test: the generated bindings and vars (worker-configuration.d.ts) plus the secrets, and
// the migrations vitest.config.ts read for test/worker-setup.ts.
declare global {
  namespace Cloudflare {
    interface Env extends Secrets {
      TEST_MIGRATIONS: D1Migration[];
    }
  }
}
