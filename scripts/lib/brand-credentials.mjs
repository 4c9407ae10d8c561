// `npm run admin -- brand credentials set|clear|show|re-encrypt`: a brand's own BigQuery service account, sealed
// in D1 (table brand_credentials) under the key-encryption secret CREDENTIALS_KEY with the Worker's own sealing
// code (src/warehouse/credential-seal.ts), so what the CLI writes is what the Worker opens. The CLI needs the
// secret itself: from the environment (CREDENTIALS_KEY, and CREDENTIALS_KEY_PREVIOUS while rotating), from
// --key-file, or from the file `npm run setup` wrote when it generated the secret (credentialsKeyFile).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { sql } from './d1.mjs';
import { importWorkerModules, ROOT } from './import-ts.mjs';

/**
 * Where `npm run setup` keeps the key-encryption secret it generated for a Cloudflare environment (the Worker's
 * copy is a secret and cannot be read back): .deploy/<env>/ beside the wrangler configuration. Git ignores it.
 * @param {string | undefined} envName wrangler's --env, undefined for the top-level environment
 * @param {string} [configDir] the directory of the wrangler configuration (default the repository)
 */
export function credentialsKeyFile(envName, configDir = ROOT) {
  return join(configDir, '.deploy', envName ?? 'production', 'credentials-key');
}

/**
 * Where `npm run dev` keeps the key-encryption secret of a local D1 (and gives it to `wrangler dev` as
 * CREDENTIALS_KEY): beside that database, in its --persist-to directory (default .wrangler/state), so the key
 * lives and goes with the rows it seals.
 * @param {string | undefined} persistTo wrangler's --persist-to, undefined for its default
 */
export function localCredentialsKeyFile(persistTo) {
  return join(persistTo ? resolve(persistTo) : join(ROOT, '.wrangler', 'state'), 'credentials-key');
}

/** @type {Promise<Record<string, any>> | undefined} */
let modules;
function sealModules() {
  modules ??= importWorkerModules({
    'src/warehouse/credential-seal.ts': ['seal', 'unseal', 'keyIdOf', 'UnsealError', 'MIN_SECRET_LENGTH'],
    'src/warehouse/credentials.ts': ['ServiceAccountKeySchema'],
  });
  return modules;
}

/**
 * The admin CLI's commands for per-brand credentials.
 * @param {{ UsageError: new (m: string) => Error, CommandError: new (m: string) => Error, requireId: (o: any, flag: string) => string,
 *           table: (rows: any[], cols: string[]) => string, iso: (ms: unknown) => string | null }} h the CLI's own helpers
 */
export function brandCredentialsCommands({ UsageError, CommandError, requireId, table, iso }) {
  const KEY_OPTIONS = { 'key-file': { type: 'string' } };
  const KEY_HELP = `  The key-encryption secret comes from CREDENTIALS_KEY (and CREDENTIALS_KEY_PREVIOUS while rotating) in the
  environment, else from --key-file FILE, else from the file \`npm run setup\` wrote when it generated it
  (with --remote: .deploy/<env>/credentials-key; <env> is production without --env), or locally the one
  \`npm run dev\` keeps beside the local D1 and gives the Worker (<persist-to dir>/credentials-key, by default
  .wrangler/state/credentials-key).`;

  /**
   * The current and previous key-encryption secrets, as the CLI was given them.
   * @returns {Promise<{ current: string | undefined, previous: string | undefined, source: string }>}
   */
  async function keys(o, io, { required }) {
    const previous = process.env.CREDENTIALS_KEY_PREVIOUS || undefined;
    if (process.env.CREDENTIALS_KEY) return { current: process.env.CREDENTIALS_KEY, previous, source: 'CREDENTIALS_KEY' };
    const file =
      o['key-file'] ??
      (io.target.remote
        ? credentialsKeyFile(io.target.env, io.target.config ? dirname(resolve(io.target.config)) : undefined)
        : localCredentialsKeyFile(io.target.persistTo));
    if (file && (o['key-file'] !== undefined || existsSync(file))) {
      const text = (await readFile(file, 'utf8')).trim();
      return { current: text, previous, source: file };
    }
    if (required) {
      throw new UsageError(
        'no key-encryption secret: set CREDENTIALS_KEY to the value the Worker has (the secret of the same name), or give --key-file',
      );
    }
    return { current: undefined, previous, source: 'none' };
  }

  async function requireKey(o, io) {
    const k = await keys(o, io, { required: true });
    const m = await sealModules();
    if (/** @type {string} */ (k.current).length < m.MIN_SECRET_LENGTH) {
      throw new UsageError(`the key-encryption secret from ${k.source} is shorter than ${m.MIN_SECRET_LENGTH} characters`);
    }
    return /** @type {{ current: string, previous: string | undefined, source: string }} */ (k);
  }

  async function requireBrand(io, brand) {
    const rows = await io.exec(sql`SELECT id FROM brands WHERE id = ${brand}`);
    if (rows.length === 0) throw new CommandError(`brand ${brand} does not exist`);
  }

  return {
    'brand credentials set': {
      usage: 'brand credentials set --brand BRAND_ID --file SERVICE_ACCOUNT.json [--key-file FILE]',
      summary: "store a brand's own BigQuery service-account key, encrypted (replaces the one it had)",
      details: `  The Worker signs that brand's queries with this account from then on (within CATALOG_CACHE_TTL_MS).
  Only client_email, private_key_id and private_key are kept; the key is sealed with AES-256-GCM.
${KEY_HELP}`,
      options: { brand: { type: 'string' }, file: { type: 'string' }, ...KEY_OPTIONS },
      async run(o, _p, io) {
        const brand = requireId(o, 'brand');
        if (o.file === undefined) throw new UsageError('--file is required: the service-account JSON key file from Google Cloud');
        const key = await requireKey(o, io);
        const m = await sealModules();
        let parsedJson;
        try {
          parsedJson = JSON.parse(await readFile(o.file, 'utf8'));
        } catch (e) {
          // Never the parser's message: it can quote the file, which holds a private key.
          throw new CommandError(`${o.file} is not a readable JSON file${e && typeof e === 'object' && 'code' in e ? ` (${e.code})` : ''}`);
        }
        const parsed = m.ServiceAccountKeySchema.safeParse(parsedJson);
        if (!parsed.success) {
          const fields = parsed.error.issues.map((/** @type {{ path: unknown[] }} */ i) => i.path.join('.') || '(root)').join(', ');
          throw new CommandError(`${o.file} is not a service-account key file (fields: ${fields})`);
        }
        const sa = parsed.data;
        await requireBrand(io, brand);
        const plaintext = JSON.stringify({
          type: 'service_account',
          client_email: sa.client_email,
          private_key_id: sa.private_key_id,
          private_key: sa.private_key,
        });
        const sealed = await m.seal(key.current, brand, plaintext);
        const before = await io.exec(sql`SELECT client_email FROM brand_credentials WHERE brand_id = ${brand}`);
        await io.exec(
          sql`INSERT INTO brand_credentials (brand_id, client_email, private_key_id, key_id, iv, ciphertext, updated_at)
              VALUES (${brand}, ${sa.client_email}, ${sa.private_key_id}, ${sealed.keyId}, ${sealed.iv}, ${sealed.ciphertext}, ${io.now})
              ON CONFLICT (brand_id) DO UPDATE SET client_email = excluded.client_email, private_key_id = excluded.private_key_id,
                key_id = excluded.key_id, iv = excluded.iv, ciphertext = excluded.ciphertext, updated_at = excluded.updated_at`,
          { 'FOREIGN KEY': `brand ${brand} does not exist` },
        );
        const replaced = before.length > 0;
        return {
          text: `${replaced ? 'replaced' : 'stored'} credentials of brand ${brand}: ${sa.client_email} (key ${sa.private_key_id}), sealed under key ${sealed.keyId}`,
          json: { brandId: brand, clientEmail: sa.client_email, privateKeyId: sa.private_key_id, keyId: sealed.keyId, replaced },
        };
      },
    },
    'brand credentials clear': {
      usage: 'brand credentials clear --brand BRAND_ID',
      summary: "delete a brand's stored service-account key (it falls back to the secrets' accounts)",
      options: { brand: { type: 'string' } },
      async run(o, _p, io) {
        const brand = requireId(o, 'brand');
        const rows = await io.exec(sql`DELETE FROM brand_credentials WHERE brand_id = ${brand} RETURNING client_email`);
        if (rows.length === 0) throw new CommandError(`brand ${brand} has no stored credentials`);
        return { text: `cleared credentials of brand ${brand} (${rows[0]?.client_email})`, json: { brandId: brand, cleared: true } };
      },
    },
    'brand credentials show': {
      usage: 'brand credentials show [--brand BRAND_ID] [--key-file FILE]',
      summary: 'list stored per-brand accounts: email, key id, which secret sealed them (never the private key)',
      details: `  sealed_with: "current" (CREDENTIALS_KEY), "previous" (CREDENTIALS_KEY_PREVIOUS; run re-encrypt), or
  "other" (neither: the Worker cannot open it); "unknown" when the CLI was given no secret to compare.
${KEY_HELP}`,
      options: { brand: { type: 'string' }, ...KEY_OPTIONS },
      async run(o, _p, io) {
        const brand = o.brand ?? null;
        const rows = await io.exec(
          sql`SELECT c.brand_id, b.org_id, c.client_email, c.private_key_id, c.key_id, c.updated_at
                FROM brand_credentials c JOIN brands b ON b.id = c.brand_id
               WHERE ${brand} IS NULL OR c.brand_id = ${brand} ORDER BY b.org_id, c.brand_id`,
        );
        if (brand !== null && rows.length === 0) {
          await requireBrand(io, brand);
          return {
            text: `brand ${brand} has no stored credentials: it uses its GCP_SERVICE_ACCOUNTS_BY_BRAND entry or GCP_SERVICE_ACCOUNT_JSON`,
            json: { credentials: [] },
          };
        }
        const k = await keys(o, io, { required: false });
        const m = await sealModules();
        const currentId = k.current ? await m.keyIdOf(k.current) : undefined;
        const previousId = k.previous ? await m.keyIdOf(k.previous) : undefined;
        const credentials = rows.map((r) => ({
          brandId: r.brand_id,
          orgId: r.org_id,
          clientEmail: r.client_email,
          privateKeyId: r.private_key_id,
          keyId: r.key_id,
          sealedWith: !currentId ? 'unknown' : r.key_id === currentId ? 'current' : r.key_id === previousId ? 'previous' : 'other',
          updatedAt: iso(r.updated_at),
        }));
        const display = credentials.map((c) => ({
          brand_id: c.brandId,
          client_email: c.clientEmail,
          private_key_id: c.privateKeyId,
          key_id: c.keyId,
          sealed_with: c.sealedWith,
          updated_at: c.updatedAt,
        }));
        return {
          text: table(display, ['brand_id', 'client_email', 'private_key_id', 'key_id', 'sealed_with', 'updated_at']),
          json: { credentials },
        };
      },
    },
    'brand credentials re-encrypt': {
      usage: 'brand credentials re-encrypt [--key-file FILE]',
      summary: 'seal every stored brand key under CREDENTIALS_KEY (after a rotation; opens with CREDENTIALS_KEY_PREVIOUS)',
      details: `  Rotation: put the old secret in CREDENTIALS_KEY_PREVIOUS and a new one in CREDENTIALS_KEY (wrangler secret
  put, both), run this with the same two values in the environment, then delete CREDENTIALS_KEY_PREVIOUS.
  Rows already under CREDENTIALS_KEY are left alone; a row neither secret opens is reported and left as it is.
${KEY_HELP}`,
      options: KEY_OPTIONS,
      async run(o, _p, io) {
        const key = await requireKey(o, io);
        const m = await sealModules();
        const currentId = await m.keyIdOf(key.current);
        const rows = await io.exec(
          sql`SELECT brand_id, key_id, iv, ciphertext FROM brand_credentials WHERE key_id <> ${currentId} ORDER BY brand_id`,
        );
        const resealed = [];
        const failed = [];
        for (const r of rows) {
          const brandId = String(r.brand_id);
          let plaintext;
          try {
            plaintext = await m.unseal([key.current, key.previous], brandId, { keyId: r.key_id, iv: r.iv, ciphertext: r.ciphertext });
          } catch (e) {
            if (!(e instanceof m.UnsealError)) throw e;
            failed.push({ brandId, reason: e.message });
            continue;
          }
          const s = await m.seal(key.current, brandId, plaintext);
          // Only the row as it was read: a concurrent `set` wins.
          await io.exec(
            sql`UPDATE brand_credentials SET key_id = ${s.keyId}, iv = ${s.iv}, ciphertext = ${s.ciphertext}, updated_at = ${io.now}
                 WHERE brand_id = ${brandId} AND key_id = ${r.key_id} AND iv = ${r.iv}`,
          );
          resealed.push(brandId);
        }
        const summary = `re-sealed ${resealed.length} brand key(s) under key ${currentId}${resealed.length ? ` (${resealed.join(', ')})` : ''}`;
        if (failed.length > 0) {
          throw new CommandError(`${summary}; ${failed.length} could not be opened:\n${failed.map((f) => `  ${f.reason}`).join('\n')}`);
        }
        return {
          text: rows.length === 0 ? `every stored brand key is already sealed under key ${currentId}` : summary,
          json: { keyId: currentId, resealed },
        };
      },
    },
  };
}
