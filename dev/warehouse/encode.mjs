// DuckDB result types and values -> BigQuery's REST wire form: `schema.fields` with BigQuery's (legacy)
// type names as jobs.query returns them (INTEGER, FLOAT, BOOLEAN, RECORD, ...) and rows as `{ f: [{ v }] }`
// where every scalar is a string, TIMESTAMP is float seconds (or int64 micros with
// formatOptions.useInt64Timestamp), arrays are `[{ v }]`, structs `{ f: [...] }`, NULL is null.
import {
  DuckDBArrayType,
  DuckDBArrayValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBIntervalValue,
  DuckDBListType,
  DuckDBListValue,
  DuckDBMapType,
  DuckDBMapValue,
  DuckDBStructType,
  DuckDBStructValue,
  DuckDBTimeTZValue,
  DuckDBTimeValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBTypeId,
} from '@duckdb/node-api';

/**
 * A cell as BigQuery's JSON carries it: text, null, a repeated field's `{ v }` list, or a record's `{ f }`.
 * @typedef {string | null | { v: EncodedValue }[] | { f: { v: EncodedValue }[] }} EncodedValue
 */

export class EncodeError extends Error {}

/**
 * @param {string} name
 * @param {import('@duckdb/node-api').DuckDBType} type
 * @returns {{ name: string, type: string, mode: string, fields?: object[] }}
 */
export function fieldFor(name, type) {
  switch (type.typeId) {
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY: {
      const inner = fieldFor(name, type.valueType);
      if (inner.mode === 'REPEATED')
        throw new EncodeError(`Cannot output an ARRAY of ARRAYs for column ${name}; BigQuery does not support nested arrays`);
      return { ...inner, mode: 'REPEATED' };
    }
    case DuckDBTypeId.STRUCT:
      return { name, type: 'RECORD', mode: 'NULLABLE', fields: type.entryNames.map((n, i) => fieldFor(n, type.entryTypes[i])) };
    case DuckDBTypeId.MAP:
      return { name, type: 'RECORD', mode: 'REPEATED', fields: [fieldFor('key', type.keyType), fieldFor('value', type.valueType)] };
    default:
      return { name, type: scalarTypeName(type), mode: 'NULLABLE' };
  }
}

/** BigQuery (REST, legacy spelling) name of a scalar DuckDB type. */
export function scalarTypeName(type) {
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return 'BOOLEAN';
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
    case DuckDBTypeId.BIGNUM:
    case DuckDBTypeId.SQLNULL: // BigQuery types a bare NULL as INT64
      return 'INTEGER';
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      return 'FLOAT';
    case DuckDBTypeId.DECIMAL:
      return type.scale <= 9 && type.width - type.scale <= 29 ? 'NUMERIC' : 'BIGNUMERIC';
    case DuckDBTypeId.BLOB:
      return 'BYTES';
    case DuckDBTypeId.DATE:
      return 'DATE';
    case DuckDBTypeId.TIME:
    case DuckDBTypeId.TIME_NS:
    case DuckDBTypeId.TIME_TZ:
      return 'TIME';
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return 'DATETIME';
    case DuckDBTypeId.TIMESTAMP_TZ:
      return 'TIMESTAMP';
    case DuckDBTypeId.INTERVAL:
      return 'INTERVAL';
    case DuckDBTypeId.VARCHAR:
      return type.alias === 'JSON' ? 'JSON' : 'STRING';
    default:
      return 'STRING';
  }
}

/** Standard-SQL spelling (INT64, FLOAT64, ARRAY<...>, STRUCT<...>) as INFORMATION_SCHEMA and dry runs show it. */
export function standardTypeName(type) {
  switch (type.typeId) {
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY:
      return `ARRAY<${standardTypeName(type.valueType)}>`;
    case DuckDBTypeId.STRUCT:
      return `STRUCT<${type.entryNames.map((n, i) => `${n} ${standardTypeName(type.entryTypes[i])}`).join(', ')}>`;
    default: {
      const legacy = scalarTypeName(type);
      return { INTEGER: 'INT64', FLOAT: 'FLOAT64', BOOLEAN: 'BOOL' }[legacy] ?? legacy;
    }
  }
}

/**
 * Formats a double the way BigQuery's REST API does (Java's Double.toString): plain decimal with at least
 * one fractional digit for 1e-3 <= |x| < 1e7, otherwise d.dddE[-]n.
 */
export function formatDouble(x) {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(x);
  if (abs >= 1e-3 && abs < 1e7) {
    const s = String(x);
    return s.includes('.') ? s : `${s}.0`;
  }
  const [mantissa, exp] = x.toExponential().split('e');
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exp)}`;
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

function fraction(micros) {
  return micros ? `.${pad(micros, 6)}` : '';
}

function dateString({ year, month, day }) {
  return `${year < 0 ? '-' : ''}${pad(Math.abs(year), 4)}-${pad(month)}-${pad(day)}`;
}

function timeString({ hour, min, sec, micros }) {
  return `${pad(hour)}:${pad(min)}:${pad(sec)}${fraction(micros)}`;
}

/** BigQuery's canonical INTERVAL text: Y-M D H:M:S[.F] with signs per group. */
function intervalString({ months, days, micros }) {
  const sign = (n) => (n < 0 ? '-' : '');
  const m = Math.abs(months);
  const us = micros < 0n ? -micros : micros;
  const totalSeconds = us / 1_000_000n;
  const frac = Number(us % 1_000_000n);
  const h = totalSeconds / 3600n;
  const mi = (totalSeconds % 3600n) / 60n;
  const s = totalSeconds % 60n;
  return `${sign(months)}${Math.trunc(m / 12)}-${m % 12} ${days} ${micros < 0n ? '-' : ''}${h}:${mi}:${s}${frac ? `.${pad(frac, 6).replace(/0+$/, '')}` : ''}`;
}

/** BigQuery answers JSON values in canonical form (no insignificant whitespace). */
function canonicalJson(s) {
  try {
    return JSON.stringify(JSON.parse(s));
  } catch {
    return s;
  }
}

function numericString(s) {
  if (!s.includes('.')) return s;
  const trimmed = s.replace(/0+$/, '').replace(/\.$/, '');
  return trimmed === '-0' ? '0' : trimmed;
}

/**
 * Encodes one cell value. The column type says which DuckDB value class the cell holds; each case checks that
 * class before reading it, and anything else is sent as its text.
 * @param {import('@duckdb/node-api').DuckDBType} type
 * @param {import('@duckdb/node-api').DuckDBValue | undefined} value
 * @param {{ int64Timestamp?: boolean }} opts
 * @returns {EncodedValue}
 */
export function encodeValue(type, value, opts) {
  if (value === null || value === undefined) return null;
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return value ? 'true' : 'false';
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      return formatDouble(Number(value));
    case DuckDBTypeId.DECIMAL:
      return numericString(String(value));
    case DuckDBTypeId.BLOB:
      if (value instanceof DuckDBBlobValue) return Buffer.from(value.bytes).toString('base64');
      break;
    case DuckDBTypeId.DATE:
      if (value instanceof DuckDBDateValue) return value.isFinite ? dateString(value.toParts()) : String(value);
      break;
    case DuckDBTypeId.TIME:
    case DuckDBTypeId.TIME_NS:
      // Only TIME carries parts; TIME_NS (no toParts) goes out as its text below.
      if (value instanceof DuckDBTimeValue) return timeString(value.toParts());
      break;
    case DuckDBTypeId.TIME_TZ:
      if (value instanceof DuckDBTimeTZValue) return timeString(value.toParts().time);
      break;
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS: {
      // Only microsecond TIMESTAMP carries parts; the _S/_MS/_NS kinds go out as their text below.
      if (value instanceof DuckDBTimestampValue) {
        if (value.isFinite === false) return String(value);
        const parts = value.toParts();
        return `${dateString(parts.date)}T${timeString(parts.time)}`;
      }
      break;
    }
    case DuckDBTypeId.TIMESTAMP_TZ:
      if (value instanceof DuckDBTimestampTZValue)
        return opts.int64Timestamp ? String(value.micros) : formatDouble(Number(value.micros) / 1e6);
      break;
    case DuckDBTypeId.INTERVAL:
      if (value instanceof DuckDBIntervalValue) return intervalString(value);
      break;
    case DuckDBTypeId.LIST:
      if (type instanceof DuckDBListType && value instanceof DuckDBListValue)
        return value.items.map((item) => ({ v: encodeValue(type.valueType, item, opts) }));
      break;
    case DuckDBTypeId.ARRAY:
      if (type instanceof DuckDBArrayType && value instanceof DuckDBArrayValue)
        return value.items.map((item) => ({ v: encodeValue(type.valueType, item, opts) }));
      break;
    case DuckDBTypeId.STRUCT:
      if (type instanceof DuckDBStructType && value instanceof DuckDBStructValue) {
        return { f: type.entryNames.map((n, i) => ({ v: encodeValue(type.entryTypes[i], value.entries[n], opts) })) };
      }
      break;
    case DuckDBTypeId.MAP:
      if (type instanceof DuckDBMapType && value instanceof DuckDBMapValue) {
        return value.entries.map((e) => ({
          v: { f: [{ v: encodeValue(type.keyType, e.key, opts) }, { v: encodeValue(type.valueType, e.value, opts) }] },
        }));
      }
      break;
    case DuckDBTypeId.VARCHAR:
      return type.alias === 'JSON' ? canonicalJson(String(value)) : String(value);
  }
  return String(value);
}
