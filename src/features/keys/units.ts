/**
 * Numbers as the administration pages show and read them. Pure: no I/O.
 *
 * Byte limits round-trip: `formatByteLimit` writes the exact value in the largest binary unit that shows it with at
 * most three decimals (`0.5 GiB`, `1.5 TiB`, `512 KiB`), else in bytes with thousands separators
 * (`20,000,000 bytes`), and `parseByteQuantity` reads every such text back to the same number of bytes.
 */

export const KIB = 1024;
export const MIB = 1024 ** 2;
export const GIB = 1024 ** 3;
export const TIB = 1024 ** 4;

const UNITS: { name: string; bytes: number }[] = [
  { name: 'TiB', bytes: TIB },
  { name: 'GiB', bytes: GIB },
  { name: 'MiB', bytes: MIB },
  { name: 'KiB', bytes: KIB },
];
const UNIT_BYTES = new Map<string, number>([
  ['b', 1],
  ['byte', 1],
  ['bytes', 1],
  ...UNITS.map((u): [string, number] => [u.name.toLowerCase(), u.bytes]),
]);

/** Decimals a shown quantity may carry; more would not be "human units" any more. */
const MAX_DECIMALS = 3;

/** A count with thousands separators: `1,000`. */
export const count = (n: number) => n.toLocaleString('en-US');

/** A count and its noun, singular for one: `1 run`, `2 runs`, `1,000 runs`. */
export const plural = (n: number, noun: string) => `${count(n)} ${n === 1 ? noun : `${noun}s`}`;

function decimalText(units: bigint, scale: bigint): string {
  const whole = units / scale;
  const frac = units % scale;
  const wholeText = count(Number(whole));
  if (frac === 0n) return wholeText;
  return `${wholeText}.${frac.toString().padStart(MAX_DECIMALS, '0').replace(/0+$/, '')}`;
}

/** A stored byte limit, exactly: `0.5 GiB`, `100 GiB`, `20,000,000 bytes`. */
export function formatByteLimit(bytes: number): string {
  const b = BigInt(bytes);
  const scale = 10n ** BigInt(MAX_DECIMALS);
  for (const [i, unit] of UNITS.entries()) {
    const u = BigInt(unit.bytes);
    // Exact with at most MAX_DECIMALS decimals, and not a four-digit figure a larger unit would show better.
    if ((b * scale) % u === 0n && (i === 0 || b < u * 1024n) && b * scale >= u)
      return `${decimalText((b * scale) / u, scale)} ${unit.name}`;
  }
  return bytes === 1 ? '1 byte' : `${count(bytes)} bytes`;
}

/** An amount of bytes, rounded for reading (usage figures): `1.5 GiB`, `312 bytes`. */
export function formatBytes(n: number): string {
  for (const unit of UNITS) if (n >= unit.bytes) return `${+(n / unit.bytes).toFixed(2)} ${unit.name}`;
  return n === 1 ? '1 byte' : `${count(n)} bytes`;
}

const QUANTITY = /^(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*([a-z]+)?$/i;

export type ByteQuantity = { ok: true; bytes: number } | { ok: false; message: string };

/**
 * A byte amount typed in a form: a number, optionally with thousands separators and decimals, and a unit (bytes, KiB,
 * MiB, GiB, TiB; case-insensitive). A bare number is in `defaultUnit`. Fractions of a byte are rounded to the
 * nearest byte (0.001 GiB is 1,073,742 bytes).
 */
export function parseByteQuantity(text: string, defaultUnit: 'GiB' = 'GiB'): ByteQuantity {
  const m = QUANTITY.exec(text.trim());
  if (!m) return { ok: false, message: 'must be a number with an optional unit, e.g. 500 GiB, 1.5 TiB or 200 MiB' };
  const [, whole = '', frac = '', unitText = defaultUnit] = m;
  const unit = UNIT_BYTES.get(unitText.toLowerCase());
  if (unit === undefined) return { ok: false, message: `unknown unit “${unitText}”; use bytes, KiB, MiB, GiB or TiB` };
  const scale = 10n ** BigInt(frac.length);
  const scaled = BigInt(whole.replaceAll(',', '') + frac) * BigInt(unit);
  // Round half up to whole bytes.
  const bytes = (scaled * 2n + scale) / (scale * 2n);
  if (scaled === 0n) return { ok: false, message: 'must be greater than 0' };
  if (bytes === 0n) return { ok: false, message: 'must be at least 1 byte' };
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, message: 'is too large' };
  return { ok: true, bytes: Number(bytes) };
}
