/**
 * Administrator passwords: PBKDF2-SHA256 through WebCrypto (runs in workerd and in Node 20 alike).
 * 100,000 iterations is the most workerd's PBKDF2 accepts; the iteration count is stored per user so it can
 * be raised later without invalidating existing hashes.
 */
import { toHex } from '../lib/ids';

export const PASSWORD_ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BITS = 256;

export interface PasswordHash {
  /** hex */
  hash: string;
  /** hex */
  salt: string;
  iterations: number;
}

function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-f]*$/i.test(hex)) throw new Error('not a hex string');
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(password), 'PBKDF2', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, key, HASH_BITS);
  return new Uint8Array(bits);
}

/** Hashes a password with a fresh 16-byte random salt (or the given hex salt, for tests and migrations). */
export async function hashPassword(password: string, opts: { salt?: string; iterations?: number } = {}): Promise<PasswordHash> {
  const iterations = opts.iterations ?? PASSWORD_ITERATIONS;
  let salt: Uint8Array;
  if (opts.salt !== undefined) {
    salt = fromHex(opts.salt);
  } else {
    salt = new Uint8Array(SALT_BYTES);
    crypto.getRandomValues(salt);
  }
  return { hash: toHex(await derive(password, salt, iterations)), salt: toHex(salt), iterations };
}

/** True when `password` matches the stored hash. Compares in constant time; malformed stored values are false. */
export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  let salt: Uint8Array;
  let expected: Uint8Array;
  try {
    salt = fromHex(stored.salt);
    expected = fromHex(stored.hash);
  } catch {
    return false;
  }
  if (!Number.isSafeInteger(stored.iterations) || stored.iterations < 1) return false;
  const actual = await derive(password, salt, stored.iterations);
  if (actual.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < actual.length; i++) diff |= actual[i]! ^ expected[i]!;
  return diff === 0;
}
