// Throwaway Google service-account credentials for the local warehouse and the tests.
// The Worker signs its BigQuery bearer JWT with `private_key`; the local warehouse verifies it
// against `publicKeyPem`, exactly as BigQuery verifies a self-signed service-account JWT.
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';

const DEFAULT_EMAIL = 'query-api@service-v1.iam.gserviceaccount.com';

/**
 * Creates a fresh RS256 key pair in Google's service-account JSON shape.
 * @param {{ clientEmail?: string, projectId?: string }} [opts] defaults: the dev account of project `service-v1`.
 * @returns {{ json: string, clientEmail: string, publicKeyPem: string, keyId: string }}
 */
export function createServiceAccount(opts = {}) {
  const clientEmail = opts.clientEmail ?? DEFAULT_EMAIL;
  const projectId = opts.projectId ?? 'service-v1';
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyId = randomBytes(20).toString('hex');
  const json = JSON.stringify({
    type: 'service_account',
    project_id: projectId,
    private_key_id: keyId,
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: clientEmail,
    client_id: String(BigInt('0x' + randomBytes(8).toString('hex'))),
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: 'https://oauth2.googleapis.com/token',
    auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
    client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(clientEmail)}`,
    universe_domain: 'googleapis.com',
  });
  return { json, clientEmail, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), keyId };
}

/**
 * Reads an existing service-account JSON key (e.g. `.dev/service-account.json`) into the shape
 * `startWarehouse` trusts. Throws when the JSON lacks a client email or an RSA private key.
 * @param {string} json
 * @returns {{ json: string, clientEmail: string, publicKeyPem: string, keyId: string }}
 */
export function serviceAccountFromJson(json) {
  const parsed = JSON.parse(json);
  if (typeof parsed?.client_email !== 'string' || typeof parsed?.private_key !== 'string') {
    throw new Error('service-account JSON needs client_email and private_key');
  }
  const publicKeyPem = createPublicKey(parsed.private_key).export({ type: 'spki', format: 'pem' }).toString();
  const keyId = typeof parsed.private_key_id === 'string' ? parsed.private_key_id : '';
  return { json, clientEmail: parsed.client_email, publicKeyPem, keyId };
}

/**
 * Signs the self-signed bearer JWT BigQuery accepts for a service account (what the Worker's client does
 * with WebCrypto), for scripts and tests that call the local warehouse directly.
 * @param {string} json service-account JSON
 * @param {{ nowSeconds?: number, lifetimeSeconds?: number, audience?: string, scope?: string, keyId?: string, claims?: Record<string, unknown> }} [opts]
 *   defaults: the current time, 3600 s, https://bigquery.googleapis.com/, the key's private_key_id. With `scope`, the
 *   token carries that `scope` claim and no `aud` (AIP-4111's scope form, which the Worker's client sends).
 */
export function signServiceAccountJwt(json, opts = {}) {
  const sa = JSON.parse(json);
  const iat = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  const header = { alg: 'RS256', typ: 'JWT', kid: opts.keyId ?? sa.private_key_id };
  const claims = {
    iss: sa.client_email,
    sub: sa.client_email,
    ...(opts.scope === undefined ? { aud: opts.audience ?? 'https://bigquery.googleapis.com/' } : { scope: opts.scope }),
    iat,
    exp: iat + (opts.lifetimeSeconds ?? 3600),
    ...opts.claims,
  };
  const enc = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const data = `${enc(header)}.${enc(claims)}`;
  const signature = sign('RSA-SHA256', Buffer.from(data), createPrivateKey(sa.private_key)).toString('base64url');
  return `${data}.${signature}`;
}
