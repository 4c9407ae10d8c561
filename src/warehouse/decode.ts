import { ApiError } from '../errors';
import type { FieldSchema } from './wire';

/**
 * Pure decoding of BigQuery's REST row form (`{ f: [{ v }] }`, every scalar a string) into plain JSON values,
 * driven by the result schema. The rule for values a JSON number can't hold exactly (docs/warehouse-client.md):
 *
 * - INT64: a number when it is within ±(2^53 − 1) (`Number.isSafeInteger`), otherwise the exact decimal string.
 * - FLOAT64: a number; `NaN`, `Infinity` and `-Infinity` stay the strings BigQuery sent (JSON has no such numbers).
 * - NUMERIC and BIGNUMERIC: always the exact decimal string (a double would round them).
 * - TIMESTAMP: ISO 8601 in UTC (`2024-05-01T12:34:56Z`, with `.ffffff` microseconds when non-zero). The client
 *   asks for integer microseconds (`formatOptions.useInt64Timestamp`), lossless; `int64Timestamps: false` reads
 *   BigQuery's default float-seconds text instead.
 * - RANGE: `[start, end)` as sent, except that RANGE<TIMESTAMP> bounds are rendered like TIMESTAMP columns.
 * - BOOL: a boolean. RECORD/STRUCT: an object keyed by field name. REPEATED: an array (never null).
 * - JSON: the parsed JSON value. BYTES (base64), DATE, DATETIME, TIME, GEOGRAPHY (WKT), INTERVAL and STRING:
 *   the string as sent.
 *
 * A cell that doesn't fit its declared type means the warehouse answered something we don't understand:
 * that's a 502 WAREHOUSE_ERROR, never a silently wrong value.
 */
export interface DecodeOptions {
  /** TIMESTAMP cells are integer microseconds since the epoch (the answer to `useInt64Timestamp: true`). */
  int64Timestamps: boolean;
}

const FLOAT_SECONDS: DecodeOptions = { int64Timestamps: false };

export function decodeRows(
  fields: readonly FieldSchema[],
  rows: readonly unknown[],
  opts: DecodeOptions = FLOAT_SECONDS,
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = decodeRecord(fields, rows[i], `rows[${i}]`, opts);
  return out;
}

function malformed(path: string, why: string): ApiError {
  return new ApiError('WAREHOUSE_ERROR', 'the warehouse returned a result the service could not read', {
    internal: `malformed cell at ${path}: ${why}`,
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function decodeRecord(fields: readonly FieldSchema[], row: unknown, path: string, opts: DecodeOptions): Record<string, unknown> {
  if (!isObject(row) || !Array.isArray(row.f)) throw malformed(path, 'expected { f: [...] }');
  const cells: unknown[] = row.f;
  if (cells.length !== fields.length) throw malformed(path, `expected ${fields.length} cells, got ${cells.length}`);
  const out: Record<string, unknown> = {};
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    const cell = cells[i];
    if (!isObject(cell) || !('v' in cell)) throw malformed(`${path}.f[${i}]`, 'expected { v }');
    out[field.name] = decodeField(field, cell.v, `${path}.${field.name}`, opts);
  }
  return out;
}

/** Decodes one cell's `v` for `field`, honouring REPEATED mode. */
export function decodeField(field: FieldSchema, v: unknown, path = field.name, opts: DecodeOptions = FLOAT_SECONDS): unknown {
  if (field.mode?.toUpperCase() === 'REPEATED') {
    // BigQuery sends an empty array for an empty or NULL repeated field; treat a null the same way.
    if (v === null || v === undefined) return [];
    if (!Array.isArray(v)) throw malformed(path, 'expected an array for a REPEATED field');
    return v.map((item, i) => {
      if (!isObject(item) || !('v' in item)) throw malformed(`${path}[${i}]`, 'expected { v }');
      return decodeScalarOrRecord(field, item.v, `${path}[${i}]`, opts);
    });
  }
  return decodeScalarOrRecord(field, v, path, opts);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INT_RE = /^-?\d+$/;
const FLOAT_RE = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const NON_FINITE = new Set(['NaN', 'Infinity', '-Infinity']);

function decodeScalarOrRecord(field: FieldSchema, v: unknown, path: string, opts: DecodeOptions): unknown {
  if (v === null || v === undefined) return null;
  const type = field.type.toUpperCase();
  if (type === 'RECORD' || type === 'STRUCT') return decodeRecord(field.fields ?? [], v, path, opts);
  if (typeof v !== 'string') throw malformed(path, `expected a string for ${type}`);
  switch (type) {
    case 'INTEGER':
    case 'INT64': {
      if (!INT_RE.test(v)) throw malformed(path, 'not an integer');
      const big = BigInt(v);
      return big <= MAX_SAFE && big >= -MAX_SAFE ? Number(v) : v;
    }
    case 'FLOAT':
    case 'FLOAT64': {
      if (NON_FINITE.has(v)) return v;
      if (!FLOAT_RE.test(v)) throw malformed(path, 'not a float');
      return Number(v);
    }
    case 'BOOLEAN':
    case 'BOOL':
      if (v === 'true') return true;
      if (v === 'false') return false;
      throw malformed(path, 'not a boolean');
    case 'TIMESTAMP':
      return opts.int64Timestamps ? microsToIso(v, path) : timestampToIso(v, path);
    case 'RANGE':
      return field.rangeElementType?.type.toUpperCase() === 'TIMESTAMP' ? timestampRange(v, path, opts) : v;
    case 'JSON':
      try {
        return JSON.parse(v);
      } catch {
        throw malformed(path, 'not JSON text');
      }
    // Exact-decimal and textual types are returned as sent.
    default:
      return v;
  }
}

const RANGE_RE = /^\[([^,]+), ([^)]+)\)$/;

/** `[start, end)` with each bound a TIMESTAMP in the wire form, or UNBOUNDED; bounds rendered as ISO 8601. */
function timestampRange(text: string, path: string, opts: DecodeOptions): string {
  const m = RANGE_RE.exec(text);
  if (!m) throw malformed(path, 'not a RANGE');
  const bound = (b: string) => (b === 'UNBOUNDED' ? b : opts.int64Timestamps ? microsToIso(b, path) : timestampToIso(b, path));
  return `[${bound(m[1]!)}, ${bound(m[2]!)})`;
}

/** TIMESTAMP as integer microseconds since the epoch (`"1714579200123456"`), rendered as ISO 8601 UTC. */
export function microsToIso(text: string, path = 'timestamp'): string {
  if (!INT_RE.test(text)) throw malformed(path, 'not integer microseconds');
  return isoOfMicros(BigInt(text), path);
}

const DECIMAL_RE = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * BigQuery sends TIMESTAMP as seconds since the epoch in a float's text form (`"1.7145792E9"`,
 * `"1714579200.123456"`). It is parsed as an exact decimal (never through a double, which would lose the
 * microseconds) and rendered as ISO 8601 UTC.
 */
export function timestampToIso(text: string, path = 'timestamp'): string {
  const m = DECIMAL_RE.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw malformed(path, 'not a timestamp');
  const negative = m[1] === '-';
  const frac = m[3] ?? '';
  const digits = BigInt((m[2] ?? '') + frac || '0');
  // value = digits × 10^(exp − frac.length) seconds; in microseconds the power is that plus 6.
  const pow = Number(m[4] ?? '0') - frac.length + 6;
  let micros: bigint;
  if (pow >= 0) {
    micros = digits * 10n ** BigInt(pow);
  } else {
    // More digits than microseconds carry: round half up (only float-formatting noise lives there).
    const div = 10n ** BigInt(-pow);
    micros = (digits + div / 2n) / div;
  }
  if (negative) micros = -micros;
  return isoOfMicros(micros, path);
}

function isoOfMicros(micros: bigint, path: string): string {
  let secs = micros / 1_000_000n;
  let sub = micros % 1_000_000n;
  if (sub < 0n) {
    sub += 1_000_000n;
    secs -= 1n;
  }
  const date = new Date(Number(secs) * 1000);
  if (Number.isNaN(date.getTime())) throw malformed(path, 'timestamp out of range');
  const whole = date.toISOString().slice(0, -5); // drop ".000Z"
  return sub === 0n ? `${whole}Z` : `${whole}.${sub.toString().padStart(6, '0')}Z`;
}
