import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors';
import { decodeField, decodeRows, timestampToIso } from '../src/warehouse/decode';
import type { FieldSchema } from '../src/warehouse/wire';
import { QueryResponseSchema } from '../src/warehouse/wire';

const f = (type: string, mode?: string, fields?: FieldSchema[]): FieldSchema => ({ name: 'c', type, mode, fields });

describe('decodeField: scalars by BigQuery type', () => {
  it.each([
    ['INTEGER', '42', 42],
    ['INT64', '-7', -7],
    ['INT64', '9007199254740991', 9007199254740991],
    ['INT64', '-9007199254740991', -9007199254740991],
    // Beyond ±(2^53 − 1) a double would round: the exact decimal string is returned.
    ['INT64', '9007199254740993', '9007199254740993'],
    ['INT64', '-9223372036854775808', '-9223372036854775808'],
    ['FLOAT', '1.5', 1.5],
    ['FLOAT64', '-2.5E-3', -0.0025],
    ['FLOAT64', '1e+21', 1e21],
    ['FLOAT64', 'NaN', 'NaN'],
    ['FLOAT64', 'Infinity', 'Infinity'],
    ['FLOAT64', '-Infinity', '-Infinity'],
    ['NUMERIC', '123456789012345678901234567.123456789', '123456789012345678901234567.123456789'],
    ['BIGNUMERIC', '0.12345678901234567890123456789012345678', '0.12345678901234567890123456789012345678'],
    ['BOOLEAN', 'true', true],
    ['BOOL', 'false', false],
    ['STRING', 'héllo "x"', 'héllo "x"'],
    ['BYTES', 'AAEC/w==', 'AAEC/w=='],
    ['DATE', '2024-02-29', '2024-02-29'],
    ['DATETIME', '2024-02-29T23:59:59.123456', '2024-02-29T23:59:59.123456'],
    ['TIME', '12:34:56.5', '12:34:56.5'],
    ['TIMESTAMP', '1.7145792E9', '2024-05-01T16:00:00Z'],
    ['TIMESTAMP', '1714579200.123456', '2024-05-01T16:00:00.123456Z'],
    ['JSON', '{"a":[1,true,null],"b":"x"}', { a: [1, true, null], b: 'x' }],
    ['GEOGRAPHY', 'POINT(1 2)', 'POINT(1 2)'],
    ['INTERVAL', '1-2 3 4:5:6.789', '1-2 3 4:5:6.789'],
    ['RANGE', '[2024-01-01, UNBOUNDED)', '[2024-01-01, UNBOUNDED)'],
  ])('%s %j -> %j', (type, v, expected) => {
    expect(decodeField(f(type), v)).toEqual(expected);
  });

  it.each(['INT64', 'FLOAT64', 'NUMERIC', 'BOOL', 'STRING', 'TIMESTAMP', 'JSON', 'RECORD'])('%s null -> null', (type) => {
    expect(decodeField(f(type, 'NULLABLE', [{ name: 'x', type: 'INT64' }]), null)).toBeNull();
  });

  it.each([
    ['INT64', '1.5'],
    ['INT64', 'abc'],
    ['FLOAT64', 'one'],
    ['BOOL', 'yes'],
    ['TIMESTAMP', 'yesterday'],
    ['JSON', '{not json'],
    ['STRING', 12],
    ['INT64', { f: [] }],
  ])('a %s cell %j the type cannot hold is a 502 WAREHOUSE_ERROR, not a wrong value', (type, v) => {
    let caught: unknown;
    try {
      decodeField(f(type), v);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect(caught).toMatchObject({ code: 'WAREHOUSE_ERROR', status: 502 });
  });
});

describe('timestampToIso', () => {
  it.each([
    ['0', '1970-01-01T00:00:00Z'],
    ['0.0', '1970-01-01T00:00:00Z'],
    ['1.0E-6', '1970-01-01T00:00:00.000001Z'],
    ['-1.0E-6', '1969-12-31T23:59:59.999999Z'],
    ['-1.5', '1969-12-31T23:59:58.500000Z'],
    ['1.704067200123456E9', '2024-01-01T00:00:00.123456Z'],
    ['1704067200.1', '2024-01-01T00:00:00.100000Z'],
    ['2.53402300799999999E11', '9999-12-31T23:59:59.999999Z'],
    ['-6.21355968E10', '0001-01-01T00:00:00Z'],
    // Float-formatting noise below a microsecond is rounded, not kept or truncated into an off-by-one.
    ['1704067200.0000004999', '2024-01-01T00:00:00Z'],
    ['1704067200.0000005', '2024-01-01T00:00:00.000001Z'],
  ])('%s -> %s', (text, iso) => {
    expect(timestampToIso(text)).toBe(iso);
  });
});

describe('decodeRows: nesting, repetition, whole rows', () => {
  const schema: FieldSchema[] = [
    { name: 'id', type: 'INTEGER', mode: 'REQUIRED' },
    { name: 'tags', type: 'STRING', mode: 'REPEATED' },
    {
      name: 'customer',
      type: 'RECORD',
      mode: 'NULLABLE',
      fields: [
        { name: 'name', type: 'STRING' },
        { name: 'since', type: 'DATE' },
        { name: 'scores', type: 'FLOAT', mode: 'REPEATED' },
      ],
    },
    {
      name: 'lines',
      type: 'RECORD',
      mode: 'REPEATED',
      fields: [
        { name: 'sku', type: 'STRING' },
        { name: 'qty', type: 'INT64' },
      ],
    },
  ];

  it('decodes records, repeated scalars and repeated records into plain JSON', () => {
    const rows = [
      {
        f: [
          { v: '1' },
          { v: [{ v: 'a' }, { v: 'b' }] },
          { v: { f: [{ v: 'Ann' }, { v: '2020-01-02' }, { v: [{ v: '0.5' }, { v: 'NaN' }] }] } },
          { v: [{ v: { f: [{ v: 'X1' }, { v: '2' }] } }, { v: { f: [{ v: 'X2' }, { v: '99999999999999999' }] } }] },
        ],
      },
      { f: [{ v: '2' }, { v: [] }, { v: null }, { v: [] }] },
    ];
    expect(decodeRows(schema, rows)).toEqual([
      {
        id: 1,
        tags: ['a', 'b'],
        customer: { name: 'Ann', since: '2020-01-02', scores: [0.5, 'NaN'] },
        lines: [
          { sku: 'X1', qty: 2 },
          { sku: 'X2', qty: '99999999999999999' },
        ],
      },
      { id: 2, tags: [], customer: null, lines: [] },
    ]);
  });

  it('rejects a row whose cell count does not match the schema', () => {
    expect(() => decodeRows(schema, [{ f: [{ v: '1' }] }])).toThrow(ApiError);
  });

  it('rejects a row that is not {f:[...]}', () => {
    expect(() => decodeRows(schema, [['1', [], null, []]])).toThrow(ApiError);
  });

  it('rejects a REPEATED cell that is not an array', () => {
    expect(() => decodeField({ name: 't', type: 'STRING', mode: 'REPEATED' }, 'a')).toThrow(ApiError);
  });
});

describe('TIMESTAMP as integer microseconds (formatOptions.useInt64Timestamp)', () => {
  const int64 = { int64Timestamps: true };
  it.each([
    // Samples from the official clients' tests: the float-seconds reader misread or refused these.
    ['1000000', '1970-01-01T00:00:01Z'],
    ['1714579200123456', '2024-05-01T16:00:00.123456Z'],
    ['-1', '1969-12-31T23:59:59.999999Z'],
    ['253402300799999999', '9999-12-31T23:59:59.999999Z'],
    ['-62135596800000000', '0001-01-01T00:00:00Z'],
  ])('%s -> %s', (micros, iso) => {
    expect(decodeField(f('TIMESTAMP'), micros, 'c', int64)).toBe(iso);
  });

  it('refuses a float text where integer microseconds were asked for', () => {
    expect(() => decodeField(f('TIMESTAMP'), '1.7145792E9', 'c', int64)).toThrow(ApiError);
  });

  it('decodes RANGE<TIMESTAMP> bounds like TIMESTAMP columns; other RANGEs and UNBOUNDED stay as sent', () => {
    const range = (element: string): FieldSchema => ({ name: 'r', type: 'RANGE', rangeElementType: { type: element } });
    expect(decodeField(range('TIMESTAMP'), '[1714579200000000, UNBOUNDED)', 'r', int64)).toBe('[2024-05-01T16:00:00Z, UNBOUNDED)');
    expect(decodeField(range('TIMESTAMP'), '[1.7145792E9, 1.7145792E9)', 'r')).toBe('[2024-05-01T16:00:00Z, 2024-05-01T16:00:00Z)');
    expect(decodeField(range('DATE'), '[2024-01-01, 2024-02-01)', 'r', int64)).toBe('[2024-01-01, 2024-02-01)');
    expect(() => decodeField(range('TIMESTAMP'), 'nonsense', 'r', int64)).toThrow(ApiError);
  });
});

describe('result schema: what BigQuery says about a column is kept (review F14, N10)', () => {
  it('keeps timestampPrecision (12 for a picosecond TIMESTAMP(12), also on a RANGE) as a number', () => {
    const parsed = QueryResponseSchema.parse({
      jobComplete: true,
      schema: {
        fields: [
          { name: 't', type: 'TIMESTAMP', timestampPrecision: '12' },
          { name: 'r', type: 'RANGE', rangeElementType: { type: 'TIMESTAMP' }, timestampPrecision: '12' },
          { name: 'u', type: 'TIMESTAMP' },
        ],
      },
    });
    expect(parsed.schema?.fields).toEqual([
      { name: 't', type: 'TIMESTAMP', timestampPrecision: 12 },
      { name: 'r', type: 'RANGE', rangeElementType: { type: 'TIMESTAMP' }, timestampPrecision: 12 },
      { name: 'u', type: 'TIMESTAMP' },
    ]);
  });
});
