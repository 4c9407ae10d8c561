import { z } from '@hono/zod-openapi';
import { CURSOR_TTL_MS, MAX_CURSOR_LENGTH } from '../http/cursor';

/**
 * Input fields shared by every REST route and MCP tool, declared once so both transports accept the same values
 * with the same messages by construction. Each is a plain zod schema whose description and example are zod
 * metadata (`.meta()`), which both the OpenAPI generator and zod's JSON Schema (what an MCP tool advertises)
 * read. Routes add `.openapi({ description, param })` on top; tools `.describe()` again with wording for a model.
 * Operations trust these and do not re-check.
 *
 * Every message names the field, because REST prints it as `invalid query parameter <name>: <message>` and MCP
 * as the tool error text.
 */

/** Longest id accepted (brand, report, stored query ids are all short slugs). */
export const MAX_ID_LENGTH = 128;

/** An id field: 1 to MAX_ID_LENGTH characters, messages naming `name`. */
function idField(name: string) {
  return z
    .string({ error: `${name} must be a string` })
    .min(1, { error: `${name} must not be empty` })
    .max(MAX_ID_LENGTH, { error: `${name} must be at most ${MAX_ID_LENGTH} characters` });
}

/** A brand id (`brandId` from the brands list). Callers add `.optional()`: no route requires it outright. */
export const BrandIdField = idField('brandId').meta({
  description: 'Target brand: a `brandId` from the brands list (GET /v1/data/brands, or the list_brands tool).',
  examples: ['brand_acme'],
});

/** A report id (`reportId` from the reports list). */
export const ReportIdField = idField('reportId').meta({
  description: '`reportId` from the reports list.',
  examples: ['rpt_business_overview'],
});

/** A stored query id (`id` from a report's queries or the saved queries list), sent as `queryId`. */
export const QueryIdField = idField('queryId').meta({
  description: "`id` from a report's queries or the saved queries list.",
  examples: ['rq_overview_channels'],
});

/** A page cursor: `nextCursor` of the previous page, passed back unchanged. Verified by src/http/cursor.ts. */
export const CursorField = z
  .string({ error: 'cursor must be a string' })
  .min(1, { error: 'cursor must not be empty; omit it for the first page' })
  .max(MAX_CURSOR_LENGTH, { error: 'cursor is not one this API issued' })
  .describe("Opaque token from the previous response's `nextCursor`; omit it for the first page.");

/**
 * A listing's `cursor` query parameter, described with the rules every listing cursor follows (src/http/cursor.ts):
 * bound to the key and to `filters` (how the listing names its filters), not to limit, and expiring.
 */
export function cursorQuery(filters: string) {
  return CursorField.optional().openapi({
    description:
      "Opaque token from the previous response's `nextCursor`; omit for the first page. It only works for the key and the " +
      `${filters} it was issued with (limit may change), and expires after ${CURSOR_TTL_MS / 3_600_000} hours.`,
  });
}

/** Page-size bounds of one listing (inclusive). */
export interface PageBounds {
  default: number;
  min: number;
  max: number;
}

function integerMessage(name: string, b: { min: number; max: number }, digitsOnly = false): string {
  return `${name} must be an integer from ${b.min} to ${b.max}${digitsOnly ? ', written with digits only' : ''}`;
}

/** `limit` as a JSON number (MCP tool arguments, JSON bodies): an integer within `bounds`. */
export function pageLimitArgument(bounds: PageBounds) {
  const error = integerMessage('limit', bounds);
  return z
    .number({ error })
    .int({ error })
    .min(bounds.min, { error })
    .max(bounds.max, { error })
    .describe(`Page size, ${bounds.min} to ${bounds.max}; default ${bounds.default}.`);
}

/** Digits only: no sign, exponent, hex prefix, decimal point or whitespace (`+5`, `1e1`, `0x10`, `1.0`, ` 5`). */
const DIGITS = /^[0-9]+$/;

/**
 * An integer query parameter. Query strings are text, and `Number()` (what `z.coerce` uses) reads `1e1`, `0x10`,
 * `+5`, `1.0` and ` 5` as numbers; a generated client never sends those, so they are typos or probes and get
 * 400 VALIDATION naming the parameter. Documented as `type: integer` with its bounds.
 */
export function integerQuery(name: string, bounds: { min: number; max: number; default?: number }, description: string) {
  const error = integerMessage(name, bounds, true);
  return z
    .preprocess(
      (v) => (typeof v === 'string' && DIGITS.test(v) ? Number(v) : v),
      z.number({ error }).int({ error }).min(bounds.min, { error }).max(bounds.max, { error }),
    )
    .describe(description)
    .openapi({
      type: 'integer',
      minimum: bounds.min,
      maximum: bounds.max,
      ...(bounds.default !== undefined ? { default: bounds.default } : {}),
    });
}

/** `limit` as a query parameter (REST listings). */
export function pageLimitQuery(bounds: PageBounds) {
  return integerQuery('limit', bounds, `Page size, ${bounds.min} to ${bounds.max} inclusive; default ${bounds.default}.`);
}
