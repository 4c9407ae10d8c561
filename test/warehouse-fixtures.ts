import { base64UrlEncode } from '../src/warehouse/jwt';

/** A fresh RSA key pair (WebCrypto, inside workerd): the private key as PKCS#8 PEM, as Google's key files hold it. */
export async function newKeyPair(): Promise<{ pem: string; publicKey: CryptoKey }> {
  const pair = await crypto.subtle.generateKey(
    { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    true,
    ['sign', 'verify'],
  );
  if (!('privateKey' in pair)) throw new Error('expected a key pair');
  const exported = await crypto.subtle.exportKey('pkcs8', pair.privateKey);
  if (!(exported instanceof ArrayBuffer)) throw new Error('expected PKCS#8 bytes');
  const b64 = base64UrlEncode(new Uint8Array(exported)).replace(/-/g, '+').replace(/_/g, '/');
  const padded = b64 + '='.repeat((4 - (b64.length % 4)) % 4);
  const lines = padded.match(/.{1,64}/g) ?? [];
  return { pem: `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`, publicKey: pair.publicKey };
}

export function b64urlDecode(s: string): Uint8Array {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

/** The JSON payload of a JWT (header or claims part). */
export function jwtPart(token: string, index: 0 | 1): unknown {
  return JSON.parse(new TextDecoder().decode(b64urlDecode(token.split('.')[index] ?? '')));
}
