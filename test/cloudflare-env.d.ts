import type { Secrets } from '../src/env';

// `env` from cloudflare:test: the generated bindings and vars (worker-configuration.d.ts) plus the secrets.
declare global {
  namespace Cloudflare {
    interface Env extends Secrets {}
  }
}
