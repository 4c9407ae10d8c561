import { z } from '@hono/zod-openapi';
import { CommonHeaders } from '../schemas/common';

/**
 * OpenAPI descriptions of the usage headers, for the run route's responses (`headers:` of a createRoute
 * response). Kept beside the code that computes them (usage.ts, window.ts) so the two cannot drift apart.
 */
const RateLimitLimit = z.string().openapi({
  description: 'Query runs allowed per rolling 24 hours for this key (IETF RateLimit header draft).',
  example: '1000',
});
const RateLimitRemaining = z.string().openapi({
  description: 'Query runs still allowed now. 0 when either the run budget or the bytes-billed budget is exhausted.',
  example: '993',
});
const RateLimitReset = z.string().openapi({
  description:
    'Seconds until RateLimit-Remaining next goes up: when the oldest counted run leaves the 24-hour window, or, ' +
    'when no run is left, when the next run is let in. 0 when nothing is counted.',
  example: '85312',
});
const RetryAfter = z.string().openapi({
  description: 'Whole seconds until the rolling window lets the next run in.',
  example: '3600',
});

const JobsLimit = z.string().openapi({
  description:
    "Long queries (asynchronous jobs, MCP tasks, pending cursors) this key may have running at once (the key's " +
    '`maxRunningJobs`); one more is refused with 429 `USAGE_LIMIT_EXCEEDED`, `details.limit` `runningJobs`.',
  example: '2',
});
const JobTimeout = z.string().openapi({
  description:
    "Seconds a long query of this key may run (the key's `jobTimeoutMs`, sent to BigQuery as `jobTimeoutMs`); past it " +
    'the job is cancelled and ends `WAREHOUSE_TIMEOUT`, billed what it billed.',
  example: '1800',
});

/** Headers of every run response (200, and the errors a run can end in after its budget check). */
export const RateLimitHeaders = CommonHeaders.extend({
  'RateLimit-Limit': RateLimitLimit,
  'RateLimit-Remaining': RateLimitRemaining,
  'RateLimit-Reset': RateLimitReset,
  'Jobs-Limit': JobsLimit,
  'Job-Timeout': JobTimeout,
});

/** Headers of the 429 USAGE_LIMIT_EXCEEDED response. */
export const UsageLimitExceededHeaders = RateLimitHeaders.extend({ 'Retry-After': RetryAfter });
