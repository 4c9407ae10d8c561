// Types for service-account.mjs (imported by TypeScript tests and tooling).

export interface ServiceAccount {
  /** Google's service-account JSON key (what GCP_SERVICE_ACCOUNT_JSON holds). */
  json: string;
  clientEmail: string;
  /** SPKI PEM public key: what the local warehouse trusts. */
  publicKeyPem: string;
  /** The key's `private_key_id`, sent as the JWT `kid`. */
  keyId: string;
}

/** A fresh RS256 key pair in Google's service-account JSON shape. Defaults: query-api@service-v1.iam.gserviceaccount.com, project service-v1. */
export function createServiceAccount(opts?: { clientEmail?: string; projectId?: string }): ServiceAccount;

/** Reads an existing service-account JSON key; throws when it lacks client_email or private_key. */
export function serviceAccountFromJson(json: string): ServiceAccount;

/** Signs the self-signed bearer JWT BigQuery accepts (RS256, aud https://bigquery.googleapis.com/, iss = sub = client email, kid). */
export function signServiceAccountJwt(
  json: string,
  opts?: { nowSeconds?: number; lifetimeSeconds?: number; audience?: string; keyId?: string; claims?: Record<string, unknown> },
): string;
