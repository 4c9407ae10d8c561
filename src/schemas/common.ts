import { z } from '@hono/zod-openapi';
import { ERROR_STATUS, type ErrorCode } from '../errors';
import { BrandIdField } from './fields';

const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

export const ErrorSchema = z
  .object({
    error: z.object({
      // An enum of every code the API can return, so generated clients can switch on it exhaustively.
      code: z.enum(ERROR_CODES).openapi({
        description: 'Stable error code; the HTTP status follows from it (see each response). New codes may be added.',
        example: 'VALIDATION',
      }),
      message: z.string(),
      requestId: z.string().openapi({ example: 'req_4f1c2e9a0b7d3c5e6f708192' }),
      details: z.any().optional(),
    }),
  })
  .openapi('Error');

const RequestIdHeader = z.string().openapi({ description: 'Unique id of this request; equals error.requestId on errors.' });

/** Response headers every response carries. Routes with more headers extend this object. */
export const CommonHeaders = z.object({ 'x-request-id': RequestIdHeader });

const STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request',
  401: 'Missing, invalid or revoked API key (`UNAUTHORIZED`)',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  410: 'Gone',
  412: 'The resource changed since it was read (`If-Match` did not match)',
  429: 'Daily usage limit reached (`USAGE_LIMIT_EXCEEDED`)',
  500: 'Internal error (`INTERNAL`)',
  502: 'The warehouse returned an unusable answer',
  503: 'A dependency is unavailable',
  504: 'The warehouse did not answer in time',
};

interface ErrorResponseConfig {
  description: string;
  headers: typeof CommonHeaders;
  content: { 'application/json': { schema: typeof ErrorSchema } };
}

/**
 * OpenAPI responses for the given error codes, grouped by status, each listing the codes it can carry.
 * Every route documents its errors through this, so the document matches what the handlers throw.
 */
export function errorResponses(...codes: ErrorCode[]) {
  const byStatus = new Map<(typeof ERROR_STATUS)[ErrorCode], ErrorCode[]>();
  for (const c of [...codes, 'INTERNAL' as const]) {
    const s = ERROR_STATUS[c];
    byStatus.set(s, [...(byStatus.get(s) ?? []), c]);
  }
  const out: { [S in (typeof ERROR_STATUS)[ErrorCode]]?: ErrorResponseConfig } = {};
  for (const [status, cs] of byStatus) {
    out[status] = {
      description: `${STATUS_DESCRIPTIONS[status] ?? 'Error'}. Codes: ${[...new Set(cs)].map((c) => `\`${c}\``).join(', ')}.`,
      headers: CommonHeaders,
      content: { 'application/json': { schema: ErrorSchema } },
    };
  }
  return out;
}

/** A 200 JSON response with the x-request-id header documented. */
export function okJson<T extends z.ZodType>(schema: T, description: string) {
  return {
    200: {
      description,
      headers: CommonHeaders,
      content: { 'application/json': { schema } },
    },
  } as const;
}

/**
 * A required JSON request body. Every route with one also answers 413 `PAYLOAD_TOO_LARGE` and 415
 * `UNSUPPORTED_MEDIA_TYPE` (the body checks run before validation): list them with `...JSON_BODY_ERRORS`.
 */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { 'application/json': { schema } } } as const;
}

/** The errors of reading a JSON body, which every route taking one documents. */
export const JSON_BODY_ERRORS = ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const satisfies readonly ErrorCode[];

/** The `brandId` query parameter of the listings (routes override the description where the rule differs). */
export const BrandIdQuery = BrandIdField.optional().openapi({
  description: 'Target brand. Optional for single-brand keys; for organization keys it narrows to one brand.',
});
