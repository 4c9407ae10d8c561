import type { Env } from '../env';
import { ApiError, describeError } from '../errors';
import { createLogger, type Logger } from '../lib/log';
import type { CallOptions, WarehouseClientDeps } from './types';
import { credentialFor, type ServiceAccount } from './credentials';
import { deadlineExceeded, malformedAnswer, mapUpstreamError, networkFailure, type UpstreamContext, type UpstreamFailure } from './errors';
import { bearerTokenFor } from './jwt';
import { DEFAULT_RETRY_POLICY, nextRetryDelay, parseRetryAfter, type RetryPolicy } from './retry';
import { QueryResponseSchema, type QueryResponse } from './wire';

/**
 * The warehouse client's HTTP layer: one request to BigQuery's REST API (bearer token, deadline, abort) and the
 * bounded retries around it. Every call of the client goes through `send`; see docs/warehouse-client.md.
 */

export interface Call {
  /** The brand's account, looked up (from D1 or the secrets) on the first token the call needs. */
  account: () => Promise<ServiceAccount>;
  deadline: number;
  log: Logger;
  op: string;
  upstream: UpstreamContext;
  timeoutMs: number;
  /** Shared by every call of one logical operation (copies of a Call share it). */
  tally: Tally;
}

export interface Tally {
  /** HTTP requests sent, retries included. */
  requests: number;
  /** The failure behind the last error `send` threw, to tell "refused" from "outcome unknown". */
  lastFailure: UpstreamFailure | null;
}

export interface Request {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
}

export interface SendPolicy {
  /** Resend after this failure? Default: whenever it is retryable. */
  retry?: (failure: UpstreamFailure) => boolean;
  /** A failure of a resend that means the first try succeeded (409 duplicate of our own job id): answered as `{}`. */
  accept?: (failure: UpstreamFailure, attempt: number) => boolean;
}

export interface Sent {
  json: unknown;
  /** Length of the answer's text: a cheap upper bound of its rows' size. */
  bytes: number;
}

/** What the client's calls share: the HTTP layer and the clock, with the settings of `WarehouseClientDeps`. */
export interface Transport {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  /** The job location sent on every call, if configured. */
  location: string | undefined;
  exchange(req: Request, call: Call, abortAfterMs: number): Promise<Exchanged>;
  sendMeasured(req: Request, call: Call, sendPolicy?: SendPolicy): Promise<Sent>;
  send(req: Request, call: Call, sendPolicy?: SendPolicy): Promise<unknown>;
  newCall(opts: CallOptions, op: string, timeoutMs: number, upstream?: UpstreamContext): Call;
}

type Exchanged = { ok: true; text: string } | { ok: false; failure: UpstreamFailure; retryAfterMs?: number };

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createTransport(env: Env, deps: WarehouseClientDeps): Transport {
  const base = `${env.BIGQUERY_API_BASE.replace(/\/+$/, '')}/bigquery/v2/projects/${encodeURIComponent(env.BIGQUERY_PROJECT)}`;
  const fetchFn = deps.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const now = deps.now ?? Date.now;
  const random = deps.random ?? Math.random;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...deps.retry };
  const makeLog = deps.logger ?? createLogger;
  const graceMs = deps.graceMs ?? 2_000;
  const sleep = deps.sleep ?? defaultSleep;

  function url(req: Request): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${base}${req.path}${qs ? `?${qs}` : ''}`;
  }

  async function token(call: Call): Promise<string> {
    const account = await call.account();
    try {
      return await bearerTokenFor(account, now());
    } catch (err) {
      throw new ApiError('INTERNAL', 'the warehouse credentials are misconfigured; quote the requestId to support', {
        internal: `signing the BigQuery token failed: ${describeError(err)}`,
      });
    }
  }

  /** One HTTP exchange; returns the text of a 2xx answer or the classified failure. */
  async function exchange(req: Request, call: Call, abortAfterMs: number): Promise<Exchanged> {
    const bearer = await token(call);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), Math.max(1, abortAfterMs));
    call.tally.requests++;
    try {
      const res = await fetchFn(url(req), {
        method: req.method,
        headers: {
          authorization: `Bearer ${bearer}`,
          accept: 'application/json',
          ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        signal: controller.signal,
      });
      const text = await res.text();
      if (res.ok) return { ok: true, text };
      return {
        ok: false,
        failure: mapUpstreamError(res.status, text, call.upstream),
        retryAfterMs: parseRetryAfter(res.headers.get('retry-after')),
      };
    } catch (err) {
      if (controller.signal.aborted) throw deadlineExceeded(call.timeoutMs, null);
      return { ok: false, failure: networkFailure(err) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends `req` with retries (bounded, backoff + jitter, within the deadline) and returns the parsed JSON. */
  async function sendMeasured(req: Request, call: Call, sendPolicy: SendPolicy = {}): Promise<Sent> {
    let waitedMs = 0;
    call.tally.lastFailure = null;
    for (let attempt = 1; ; attempt++) {
      const remaining = call.deadline - now();
      if (remaining <= 0) throw deadlineExceeded(call.timeoutMs, null);
      const r = await exchange(req, call, remaining + graceMs);
      if (r.ok) {
        try {
          return { json: JSON.parse(r.text), bytes: r.text.length };
        } catch {
          throw malformedAnswer(`${call.op}: not JSON`, r.text);
        }
      }
      const { failure } = r;
      if (sendPolicy.accept?.(failure, attempt)) return { json: {}, bytes: 0 };
      call.tally.lastFailure = failure;
      const retry = sendPolicy.retry ? sendPolicy.retry(failure) : failure.retryable;
      if (!retry) throw failure.error;
      const delay = nextRetryDelay(policy, { attempt, waitedMs, remainingMs: call.deadline - now(), retryAfterMs: r.retryAfterMs }, random);
      if (delay === null) {
        call.log.warn('warehouse call gave up', {
          op: call.op,
          attempts: attempt,
          code: failure.error.code,
          upstream: failure.error.internal,
        });
        throw failure.error;
      }
      call.log.warn('warehouse call failed, retrying', { op: call.op, attempt, delayMs: delay, upstream: failure.error.internal });
      await sleep(delay);
      waitedMs += delay;
    }
  }

  async function send(req: Request, call: Call, sendPolicy?: SendPolicy): Promise<unknown> {
    return (await sendMeasured(req, call, sendPolicy)).json;
  }

  function newCall(opts: CallOptions, op: string, timeoutMs: number, upstream: UpstreamContext = {}): Call {
    let account: Promise<ServiceAccount> | undefined;
    return {
      account: () => (account ??= credentialFor(env, opts.brandId, now())),
      deadline: now() + timeoutMs,
      log: makeLog(opts.requestId),
      op,
      upstream: { ...upstream, dataset: opts.dataset === undefined ? undefined : { project: env.BIGQUERY_PROJECT, dataset: opts.dataset } },
      timeoutMs,
      tally: { requests: 0, lastFailure: null },
    };
  }

  return { now, sleep, random, location: env.BIGQUERY_LOCATION || undefined, exchange, sendMeasured, send, newCall };
}

export function parseQueryResponse(json: unknown, op: string): QueryResponse {
  const r = QueryResponseSchema.safeParse(json);
  if (!r.success) throw malformedAnswer(`${op}: ${r.error.issues.map((i) => i.path.join('.')).join(', ')}`, JSON.stringify(json));
  return r.data;
}
