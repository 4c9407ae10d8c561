// Shared by the warehouse node tests: a warehouse started for one test file, and a caller that signs
// requests like the Worker's client does.
import { createServiceAccount, signServiceAccountJwt } from '../../dev/warehouse/service-account.mjs';
import { startWarehouse } from '../../dev/warehouse/server.mjs';

export const API = '/bigquery/v2/projects/service-v1';

/**
 * Starts a warehouse trusting a fresh service account (whose token `call` sends) plus `extraAccounts`.
 * @param {Partial<import('../../dev/warehouse/server.mjs').StartWarehouseOptions> & { extraAccounts?: import('../../dev/warehouse/server.mjs').TrustedServiceAccount[] }} [opts]
 */
export async function startTestWarehouse({ extraAccounts = [], ...opts } = {}) {
  const sa = createServiceAccount();
  const wh = await startWarehouse({
    serviceAccounts: [{ clientEmail: sa.clientEmail, publicKeyPem: sa.publicKeyPem, keyId: sa.keyId }, ...extraAccounts],
    ...opts,
  });
  const token = signServiceAccountJwt(sa.json);
  /** Calls the warehouse; returns status, parsed JSON (or null) and headers. */
  async function call(method, path, body, headers = {}) {
    const res = await fetch(`${wh.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.status, body: json, text, headers: res.headers };
  }
  /** jobs.query with the fields the Worker sends. */
  const query = (sql, extra = {}) => call('POST', `${API}/queries`, { query: sql, useLegacySql: false, ...extra });
  /** jobs.insert dry run. */
  const dryRun = (sql) => call('POST', `${API}/jobs`, { configuration: { dryRun: true, query: { query: sql, useLegacySql: false } } });
  return { wh, sa, token, call, query, dryRun };
}

/** Plain values of a jobs.query/getQueryResults answer: one object per row keyed by column name (scalars only). */
export function rowsOf(body) {
  const names = body.schema.fields.map((f) => f.name);
  return (body.rows ?? []).map((r) => Object.fromEntries(r.f.map((c, i) => [names[i], c.v])));
}
