import { TtlCache } from '../lib/ttl-cache';

/**
 * Sealing per-brand service-account keys for storage in D1 (table `brand_credentials`): AES-256-GCM with
 * WebCrypto under a key derived from a key-encryption secret (`CREDENTIALS_KEY`). Pure: no I/O, so the Worker
 * (which opens) and the admin CLI (which seals, in Node) run this same file.
 *
 * - The AES key is HKDF-SHA256 of the secret, so any secret of at least 32 characters will do (`openssl rand
 *   -hex 32`) and the secret itself is never used as a key directly.
 * - Each sealed value records the `keyId` of the secret that sealed it (a second HKDF output, not the key), so a
 *   rotation can keep the previous secret for opening (`CREDENTIALS_KEY_PREVIOUS`) and re-seal row by row.
 * - The brand id is the additional authenticated data: a row copied onto another brand does not open.
 * - A fresh random 96-bit IV per seal, as NIST SP 800-38D recommends for GCM.
 */

export const MIN_SECRET_LENGTH = 32;

/** A sealed value as stored: base64 IV and ciphertext (tag appended, as WebCrypto returns it). */
export interface Sealed {
  keyId: string;
  iv: string;
  ciphertext: string;
}

const SALT = new TextEncoder().encode('warehouse-query-api brand credentials');
const encoder = new TextEncoder();

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** Refuses a secret too short to be a key; the message never quotes it. */
function checkSecret(secret: string, name: string): void {
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new Error(`${name} must be at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -hex 32)`);
  }
}

async function hkdf(secret: string, info: string, bits: number): Promise<ArrayBuffer> {
  const base = await crypto.subtle.importKey('raw', encoder.encode(secret), 'HKDF', false, ['deriveBits']);
  return crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: SALT, info: encoder.encode(info) }, base, bits);
}

interface DerivedKey {
  keyId: string;
  key: CryptoKey;
}

/** Per process or isolate: derivations are cheap but repeat on every sealed row otherwise. */
const derived = new TtlCache<Promise<DerivedKey>>(8);

function deriveKey(secret: string): Promise<DerivedKey> {
  return derived.load(secret, 0, Infinity, async () => {
    const idBytes = new Uint8Array(await hkdf(secret, 'key id', 64));
    const keyBytes = await hkdf(secret, 'aes-256-gcm key', 256);
    const key = await crypto.subtle.importKey('raw', keyBytes, 'AES-GCM', false, ['encrypt', 'decrypt']);
    return { keyId: [...idBytes].map((b) => b.toString(16).padStart(2, '0')).join(''), key };
  });
}

/** The id a secret's sealed values carry: lets an operator see which secret a row needs without the secret. */
export async function keyIdOf(secret: string): Promise<string> {
  checkSecret(secret, 'the key-encryption secret');
  return (await deriveKey(secret)).keyId;
}

/**
 * What a sealed value is bound to: `brand` credentials (the default) or an organization's webhook (`org-webhook`,
 * src/features/notifications/org-webhook.ts); a value sealed for one owner or purpose does not open as another.
 */
export type SealPurpose = 'brand' | 'org-webhook';

function aad(brandId: string, purpose: SealPurpose = 'brand'): Uint8Array<ArrayBuffer> {
  return new Uint8Array(encoder.encode(`${purpose}:${brandId}`));
}

/** Seals `plaintext` for `brandId` (or, with `purpose`, another owner's id) under `secret`. */
export async function seal(secret: string, brandId: string, plaintext: string, purpose?: SealPurpose): Promise<Sealed> {
  checkSecret(secret, 'the key-encryption secret');
  const { keyId, key } = await deriveKey(secret);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: aad(brandId, purpose) }, key, encoder.encode(plaintext));
  return { keyId, iv: toBase64(iv), ciphertext: toBase64(new Uint8Array(ct)) };
}

/** Why a sealed value did not open; never carries key material or plaintext. */
export class UnsealError extends Error {}

/**
 * Opens a sealed value of `brandId` with whichever of `secrets` sealed it (matched by key id; unset entries are
 * skipped). Throws UnsealError when none matches or the value was altered (or belongs to another brand).
 */
export async function unseal(
  secrets: ReadonlyArray<string | undefined>,
  brandId: string,
  sealed: Sealed,
  purpose?: SealPurpose,
): Promise<string> {
  for (const secret of secrets) {
    if (!secret || secret.length < MIN_SECRET_LENGTH) continue;
    const { keyId, key } = await deriveKey(secret);
    if (keyId !== sealed.keyId) continue;
    try {
      const pt = await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: fromBase64(sealed.iv), additionalData: aad(brandId, purpose) },
        key,
        fromBase64(sealed.ciphertext),
      );
      return new TextDecoder().decode(pt);
    } catch {
      throw new UnsealError(
        `the sealed credentials of brand ${brandId} do not open under key ${keyId}: altered, or sealed for another brand`,
      );
    }
  }
  throw new UnsealError(
    `the credentials of brand ${brandId} are sealed under key ${sealed.keyId}, which neither CREDENTIALS_KEY nor ` +
      `CREDENTIALS_KEY_PREVIOUS is`,
  );
}
