import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BrandIdField, CursorField, integerQuery, pageLimitArgument, QueryIdField, ReportIdField } from '../src/schemas/fields';

/** The shared input fields on their own: what both transports accept, with messages naming the field. */
const BOUNDS = { default: 50, min: 1, max: 200 };

function firstMessage(schema: z.ZodType, value: unknown): string | undefined {
  const r = schema.safeParse(value);
  return r.success ? undefined : r.error.issues[0]?.message;
}

describe('shared input fields', () => {
  it.each([
    ['brandId', BrandIdField],
    ['reportId', ReportIdField],
    ['queryId', QueryIdField],
  ] as const)('%s: 1 to 128 characters, messages name the field', (name, field) => {
    expect(field.parse('x')).toBe('x');
    expect(field.parse('x'.repeat(128))).toHaveLength(128);
    expect(firstMessage(field, '')).toBe(`${name} must not be empty`);
    expect(firstMessage(field, 'x'.repeat(129))).toBe(`${name} must be at most 128 characters`);
    expect(firstMessage(field, 5)).toBe(`${name} must be a string`);
  });

  it('cursor: non-empty, at most the length the cursor core opens', () => {
    expect(firstMessage(CursorField, '')).toMatch(/^cursor must not be empty/);
    expect(firstMessage(CursorField, 'x'.repeat(1025))).toBe('cursor is not one this API issued');
    expect(CursorField.parse('x'.repeat(1024))).toHaveLength(1024);
  });

  it.each([
    ['10', 10],
    ['007', 7],
    ['1', 1],
    ['200', 200],
  ])('integer query parameter %j reads as %i', (text, n) => {
    expect(integerQuery('limit', BOUNDS, 'page size').parse(text)).toBe(n);
  });

  it.each(['1e1', '0x10', '+5', '1.0', ' 5', '5 ', '', '-1', '0', '201', 'NaN', '9'.repeat(400)])(
    'integer query parameter %j is refused, naming it',
    (text) => {
      expect(firstMessage(integerQuery('offset', BOUNDS, 'x'), text)).toBe(
        'offset must be an integer from 1 to 200, written with digits only',
      );
    },
  );

  it('limit as a JSON number (tool arguments): an integer within the bounds', () => {
    const limit = pageLimitArgument(BOUNDS);
    expect(limit.parse(200)).toBe(200);
    for (const bad of [0, 201, 1.5, '10']) expect(firstMessage(limit, bad)).toBe('limit must be an integer from 1 to 200');
  });

  it('advertises the same bounds and descriptions in the JSON Schema an MCP tool publishes', () => {
    const shape = z.toJSONSchema(z.object({ brandId: BrandIdField, cursor: CursorField, limit: pageLimitArgument(BOUNDS) }), {
      io: 'input',
    });
    expect(shape).toMatchObject({
      properties: {
        brandId: { type: 'string', minLength: 1, maxLength: 128, description: expect.stringContaining('brandId') },
        cursor: { type: 'string', minLength: 1, maxLength: 1024, description: expect.stringContaining('nextCursor') },
        limit: { type: 'integer', minimum: 1, maximum: 200, description: 'Page size, 1 to 200; default 50.' },
      },
    });
  });
});
