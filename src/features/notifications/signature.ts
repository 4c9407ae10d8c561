/**
 * Signing webhook deliveries, in the Standard Webhooks scheme (https://www.standardwebhooks.com/): a receiver checks
 * `webhook-signature` = "v1,<base64 HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${body}`>" under the secret's
 * bytes, and refuses a timestamp far from its clock. docs/examples/webhook-receiver.mjs is the documented receiver.
 * Pure: the caller passes the time.
 */

const PREFIX = 'whsec_';
/** Bytes of a generated secret (256 bits, as for an HMAC-SHA256 key). */
const SECRET_BYTES = 32;
/** Fewer bytes than this is not a key we sign with (a typo'd or truncated secret). */
const MIN_SECRET_BYTES = 24;

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** A fresh `whsec_...` secret. */
export function newWebhookSecret(): string {
  return PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
}

/** The key bytes of a `whsec_` secret, or null when it is not one (never says why with the secret in it). */
function secretBytes(secret: string): Uint8Array<ArrayBuffer> | null {
  if (!secret.startsWith(PREFIX)) return null;
  try {
    const s = atob(secret.slice(PREFIX.length));
    if (s.length < MIN_SECRET_BYTES) return null;
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

/** The three headers of a signed delivery of `body`, as event `id` at `nowMs`. */
export async function signatureHeaders(secret: string, id: string, nowMs: number, body: string): Promise<Record<string, string>> {
  const bytes = secretBytes(secret.trim());
  if (bytes === null) throw new Error('not a whsec_ secret');
  const timestamp = String(Math.floor(nowMs / 1000));
  const key = await crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${toBase64(new Uint8Array(mac))}` };
}
