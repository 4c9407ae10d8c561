import type { Principal } from './auth/principal';
import type { Config, Env } from './env';
import type { Logger } from './lib/log';

/** What every operation receives, whichever transport (REST or MCP) called it. */
export interface OpContext {
  env: Env;
  /** The deployment's variables, parsed once per isolate (configOf). */
  config: Config;
  principal: Principal;
  requestId: string;
  log: Logger;
  /** Milliseconds since epoch; injected so operations are deterministic in tests. */
  now: number;
  transport: 'rest' | 'mcp';
  /** Origin of the request (links in notifications); absent outside a request. */
  origin?: string;
  waitUntil: (p: Promise<unknown>) => void;
}
