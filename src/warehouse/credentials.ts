import { z } from 'zod';
import { configOf, type Env } from '../env';
import { ApiError } from '../errors';
import { TtlCache } from '../lib/ttl-cache';
import { unseal, UnsealError } from './credential-seal';

/**
 * Service-account credentials for BigQuery. Per brand, in this order: the brand's row in D1's
 * `brand_credentials` (sealed under `CREDENTIALS_KEY`, managed with `npm run admin -- brand credentials`; any
 * number of brands), its entry in the `GCP_SERVICE_ACCOUNTS_BY_BRAND` secret (`{ "<brandId>": <service-account
 * JSON> }`; one secret holds only about two keys), else the default account of `GCP_SERVICE_ACCOUNT_JSON`. So
 * a deployment can make IAM the tenant boundary: each brand's account can read only its own dataset. A brand
 * without its own account uses the default one (give that one no dataset access to fail closed). A stored row
 * that does not open is an error, never a fall back to the default account.
 */

/** The fields of Google's service-account key file that signing needs; the rest of the file is ignored. */
export const ServiceAccountKeySchema = z.object({
  type: z.literal('service_account').optional(),
  client_email: z.string().min(3).includes('@'),
  private_key_id: z.string().min(1),
  private_key: z.string().includes('-----BEGIN PRIVATE KEY-----'),
});

export interface ServiceAccount {
  clientEmail: string;
  privateKeyId: string;
  /** PKCS#8 PEM. Never logged. */
  privateKeyPem: string;
}

const BrandMapSchema = z.record(z.string().min(1), ServiceAccountKeySchema);

function toServiceAccount(k: z.infer<typeof ServiceAccountKeySchema>): ServiceAccount {
  return { clientEmail: k.client_email, privateKeyId: k.private_key_id, privateKeyPem: k.private_key };
}

/** A configuration error: 500 on the wire with a generic message; the cause (never key material) to the log. */
function misconfigured(what: string): ApiError {
  return new ApiError('INTERNAL', 'the warehouse credentials are misconfigured; quote the requestId to support', {
    internal: what,
  });
}

function parseJson(text: string, name: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // The parser's own message can quote the text, which here is a private key: say only where it failed.
    throw misconfigured(`${name} is not valid JSON`);
  }
}

/** Zod issue paths and codes only; messages can echo input. */
function issueSummary(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.code}`).join('; ');
}

interface ParsedCredentials {
  defaultAccount: ServiceAccount | null;
  byBrand: Map<string, ServiceAccount>;
}

/** Per isolate: parsed once per distinct pair of secret values (tests may run several configurations). */
let cache: { raw: string | undefined; rawByBrand: string | undefined; parsed: ParsedCredentials } | null = null;

function parseCredentials(raw: string | undefined, rawByBrand: string | undefined): ParsedCredentials {
  let defaultAccount: ServiceAccount | null = null;
  if (raw) {
    const r = ServiceAccountKeySchema.safeParse(parseJson(raw, 'GCP_SERVICE_ACCOUNT_JSON'));
    if (!r.success) throw misconfigured(`GCP_SERVICE_ACCOUNT_JSON is not a service-account key: ${issueSummary(r.error)}`);
    defaultAccount = toServiceAccount(r.data);
  }
  const byBrand = new Map<string, ServiceAccount>();
  if (rawByBrand) {
    const r = BrandMapSchema.safeParse(parseJson(rawByBrand, 'GCP_SERVICE_ACCOUNTS_BY_BRAND'));
    if (!r.success) {
      throw misconfigured(`GCP_SERVICE_ACCOUNTS_BY_BRAND is not { brandId: service-account key }: ${issueSummary(r.error)}`);
    }
    for (const [brandId, key] of Object.entries(r.data)) byBrand.set(brandId, toServiceAccount(key));
  }
  return { defaultAccount, byBrand };
}

const StoredRowSchema = z.object({ key_id: z.string(), iv: z.string(), ciphertext: z.string() });

/**
 * Per isolate, per brand: the opened D1 row (or its absence) for CATALOG_CACHE_TTL_MS, so a change made with the
 * CLI reaches every isolate within that time, as brand names do. Keyed by the key secrets too (tests run several).
 */
const stored = new TtlCache<Promise<ServiceAccount | null>>(1000);

async function readStored(env: Env, brandId: string): Promise<ServiceAccount | null> {
  const row = await env.DB.prepare('SELECT key_id, iv, ciphertext FROM brand_credentials WHERE brand_id = ?').bind(brandId).first();
  if (!row) return null;
  const r = StoredRowSchema.safeParse(row);
  if (!r.success) throw misconfigured(`brand_credentials row of ${brandId} is malformed: ${issueSummary(r.error)}`);
  let json: string;
  try {
    json = await unseal([env.CREDENTIALS_KEY, env.CREDENTIALS_KEY_PREVIOUS], brandId, {
      keyId: r.data.key_id,
      iv: r.data.iv,
      ciphertext: r.data.ciphertext,
    });
  } catch (err) {
    if (err instanceof UnsealError) throw misconfigured(err.message);
    throw err;
  }
  const key = ServiceAccountKeySchema.safeParse(parseJson(json, `brand_credentials of ${brandId}`));
  if (!key.success) throw misconfigured(`brand_credentials of ${brandId} is not a service-account key: ${issueSummary(key.error)}`);
  return toServiceAccount(key.data);
}

function storedCredential(env: Env, brandId: string, nowMs: number): Promise<ServiceAccount | null> {
  // Tools that run the client outside the Worker (the contract suite, benches) have no D1: no stored accounts.
  if (!env.DB) return Promise.resolve(null);
  const cacheKey = `${env.CREDENTIALS_KEY ?? ''}\n${env.CREDENTIALS_KEY_PREVIOUS ?? ''}\n${brandId}`;
  const config = configOf(env);
  // A failed read is not kept: the next call reads again.
  return stored
    .bound({ maxBytes: config.CACHE_MAX_BYTES })
    .load(cacheKey, nowMs, config.CATALOG_CACHE_TTL_MS, () => readStored(env, brandId));
}

/**
 * The account to sign requests for `brandId` with: the brand's stored one, else its entry in the by-brand
 * secret, else the default.
 */
export async function credentialFor(env: Env, brandId: string, nowMs = Date.now()): Promise<ServiceAccount> {
  const own = await storedCredential(env, brandId, nowMs);
  if (own) return own;
  const raw = env.GCP_SERVICE_ACCOUNT_JSON;
  const rawByBrand = env.GCP_SERVICE_ACCOUNTS_BY_BRAND;
  if (!cache || cache.raw !== raw || cache.rawByBrand !== rawByBrand) {
    cache = { raw, rawByBrand, parsed: parseCredentials(raw, rawByBrand) };
  }
  const account = cache.parsed.byBrand.get(brandId) ?? cache.parsed.defaultAccount;
  if (!account) {
    throw misconfigured(
      `no service account for brand ${brandId}: set GCP_SERVICE_ACCOUNT_JSON or an entry in GCP_SERVICE_ACCOUNTS_BY_BRAND`,
    );
  }
  return account;
}
