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

/** Headers of every run response (200, and the errors a run can end in after its budget check). */
export const RateLimitHeaders = CommonHeaders.extend({
  'RateLimit-Limit': RateLimitLimit,
  'RateLimit-Remaining': RateLimitRemaining,
  'RateLimit-Reset': RateLimitReset,
});

/** Headers of the 429 USAGE_LIMIT_EXCEEDED response. */
export const UsageLimitExceededHeaders = RateLimitHeaders.extend({ 'Retry-After': RetryAfter });
