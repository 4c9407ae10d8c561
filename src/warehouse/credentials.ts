import { z } from 'zod';
import type { Env } from '../env';
import { ApiError } from '../errors';

/**
 * Service-account credentials for BigQuery. One default account from the `GCP_SERVICE_ACCOUNT_JSON` secret and,
 * optionally, one per brand from `GCP_SERVICE_ACCOUNTS_BY_BRAND` (`{ "<brandId>": <service-account JSON> }`),
 * so a deployment can make IAM the tenant boundary: each brand's account can read only its own dataset. A brand
 * without an entry uses the default account (give that one no dataset access to fail closed).
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

/** The account to sign requests for `brandId` with: the brand's own when configured, else the default. */
export function credentialFor(env: Pick<Env, 'GCP_SERVICE_ACCOUNT_JSON' | 'GCP_SERVICE_ACCOUNTS_BY_BRAND'>, brandId: string): ServiceAccount {
  const raw = env.GCP_SERVICE_ACCOUNT_JSON;
  const rawByBrand = env.GCP_SERVICE_ACCOUNTS_BY_BRAND;
  if (!cache || cache.raw !== raw || cache.rawByBrand !== rawByBrand) {
    cache = { raw, rawByBrand, parsed: parseCredentials(raw, rawByBrand) };
  }
  const account = cache.parsed.byBrand.get(brandId) ?? cache.parsed.defaultAccount;
  if (!account) {
    throw misconfigured(`no service account for brand ${brandId}: set GCP_SERVICE_ACCOUNT_JSON or an entry in GCP_SERVICE_ACCOUNTS_BY_BRAND`);
  }
  return account;
}
