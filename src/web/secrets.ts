import { toHex } from '../lib/ids';

/** HMAC-SHA256 of `message` under `secret`: the root of the CSRF tokens and the flash encryption keys. */
export async function hmac(secret: string | Uint8Array, message: string): Promise<Uint8Array> {
  const raw = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
  const key = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(message)));
}

export async function hmacHex(secret: string, message: string): Promise<string> {
  return toHex(await hmac(secret, message));
}

/** String comparison whose time does not depend on where the strings differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
