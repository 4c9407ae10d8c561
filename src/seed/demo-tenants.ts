import { KEY_PREFIX } from '../auth/api-keys';
import { hashPassword } from '../auth/passwords';
import { checkCatalog } from '../features/catalog-files/check';
import { type CatalogFile, formatProblem, loadCatalog } from '../features/catalog-files/load';
import { applyStatements, planCatalog, storedCatalog } from '../features/catalog-files/plan';
import { recordVersionStatements, versionOrgs } from '../features/catalog-files/versions';
import { sha256Hex } from '../lib/ids';
import { sqlLiteral } from '../lib/sql-literal';
import { CONTRACT_PROJECT } from '../sql/guard';
import { inlineStatement } from '../features/memories/store';
import { DEMO_BRANDS, DEMO_KEY_IDS, DEMO_ORGS, DEMO_USER_IDS } from './demo-ids';

/**
 * The demo tenants of `docs/demo-data.md` (organizations, brands, API keys, administrators) and the demo catalog
 * folder `catalog/demo/` (reports, saved queries, memories), as idempotent SQL with every value inlined as a
 * quoted literal. The same statements serve D1 `batch` in tests and the local D1 in `npm run dev`, which reapplies
 * them on every start. They only add what is missing (`INSERT ... ON CONFLICT DO NOTHING`): a row that exists
 * stays as it is, so a demo key an operator revoked, a limit or a name they changed, an edited or deleted memory
 * survive a restart. The catalog goes through the catalog files' own loader, checks and statements
 * (`src/features/catalog-files/`, as `npm run admin -- catalog apply`), planned against an empty catalog.
 */

export { DEMO_BRANDS, DEMO_KEY_IDS, DEMO_ORGS, DEMO_USER_IDS };

export interface DemoSeedInput {
  /** Milliseconds since epoch: created_at of every row and the reference day of the saved queries' windows. */
  now: number;
  /** Secrets of the three demo API keys (org_demo org key, brand_acme brand key, org_other org key). */
  keys: { org: string; brand: string; other: string };
  /** admins.org administers org_demo; admins.brand administers brand_acme only. */
  admins: { org: { email: string; password: string }; brand: { email: string; password: string } };
  /**
   * Default false. True when these secrets are new but the database may already hold demo rows made with others
   * (`npm run dev` lost its credentials file while its D1 stayed): the statements then start with one UPDATE per
   * demo key and demo admin, by id, that replaces the stored secret hash (and prefix) or password (clearing a
   * sign-in lock, as `user set-password` does) and returns the row as `{ rotated, revoked_at }` when it exists.
   * Nothing else changes: other keys and users, names, limits and a revocation stay as they are.
   */
  rotate?: boolean;
  /** The demo catalog folder's files (catalog/demo/, paths relative to it): tests may pass an edited copy. */
  catalog: readonly CatalogFile[];
}

type Literal = string | number | null;

export { sqlLiteral };

/**
 * `INSERT ... ON CONFLICT DO NOTHING` of one row: inserted when missing, left alone when any row with the same
 * key (or another unique value) is already there.
 */
function insertMissing(table: string, row: Record<string, Literal>): string {
  const cols = Object.keys(row);
  return (
    `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => sqlLiteral(row[c] ?? null)).join(', ')}) ON CONFLICT DO` +
    ` NOTHING`
  );
}

/**
 * The catalog folder's statements, insert-if-missing: loaded and checked as `catalog apply` checks them (against
 * the demo tenants), planned against an empty catalog, so every item is an insert that does nothing when its
 * row exists. Memory revisions get fixed ids (`mrev_<memory id without mem_>`) so a rerun records none.
 * Throws naming each file, item and line when the folder does not pass.
 */
export async function demoCatalogStatements(files: readonly CatalogFile[], now: number): Promise<string[]> {
  const loaded = loadCatalog(files);
  const empty = storedCatalog([]);
  const orgs = Object.values(DEMO_ORGS).map((o) => o.id);
  const checked = await checkCatalog(loaded, {
    project: CONTRACT_PROJECT,
    orgs,
    brands: DEMO_BRANDS,
    current: empty.catalog,
    prune: false,
  });
  const problems = [...loaded.problems, ...checked.problems];
  if (problems.length > 0) throw new Error(`the demo catalog does not pass its checks:\n${problems.map(formatProblem).join('\n')}`);
  const plan = await planCatalog(loaded.catalog, empty, { prune: false });
  const statements = applyStatements(loaded.catalog, plan, {
    actor: { kind: 'seed', name: 'demo data' },
    now,
    ifMissing: true,
    revisionId: (id) => `mrev_${id.replace(/^mem_/, '')}`,
  });
  const orgsChanged = versionOrgs(plan, loaded.catalog, { orgs, brands: DEMO_BRANDS, catalog: empty.catalog });
  statements.push(...recordVersionStatements(plan, orgsChanged, { appliedBy: 'demo data', now, source: 'catalog/demo', once: true }));
  return statements.map((st) => inlineStatement(st, sqlLiteral));
}

/**
 * Builds the demo seed. Refuses (throws) key secrets the Worker would never accept, and a catalog folder that
 * does not pass the catalog checks (unknown slot, SQL the guard refuses, ...), so a bad catalog fails at seed
 * time, not at run time.
 */
export async function buildDemoSeed(input: DemoSeedInput): Promise<string[]> {
  const { now } = input;
  const secrets = [input.keys.org, input.keys.brand, input.keys.other];
  for (const s of secrets) {
    if (!s.startsWith(KEY_PREFIX) || s.length < KEY_PREFIX.length + 22 || s.length > 200) {
      throw new Error(`demo key secrets must start with ${KEY_PREFIX} and carry at least 128 bits (22 base64url characters)`);
    }
  }
  if (new Set(secrets).size !== secrets.length) throw new Error('demo key secrets must be distinct');

  const keyRows = await Promise.all(
    [
      { id: DEMO_KEY_IDS.org, name: 'Demo org key (org_demo)', secret: input.keys.org, org_id: DEMO_ORGS.demo.id, brand_id: null },
      { id: DEMO_KEY_IDS.brand, name: 'Demo brand key (brand_acme)', secret: input.keys.brand, org_id: null, brand_id: 'brand_acme' },
      {
        id: DEMO_KEY_IDS.other,
        name: 'Other Co org key (org_other)',
        secret: input.keys.other,
        org_id: DEMO_ORGS.other.id,
        brand_id: null,
      },
    ].map(async (k) => ({ ...k, prefix: k.secret.slice(0, KEY_PREFIX.length + 8), secret_hash: await sha256Hex(k.secret) })),
  );
  const admins = await Promise.all(
    [
      { id: DEMO_USER_IDS.org, name: 'Demo org admin', ...input.admins.org, org_id: DEMO_ORGS.demo.id, brand_id: null },
      { id: DEMO_USER_IDS.brand, name: 'Acme brand admin', ...input.admins.brand, org_id: null, brand_id: 'brand_acme' },
    ].map(async (a) => {
      if (!a.email.includes('@') || a.password.length === 0) throw new Error(`demo admin ${a.id} needs an email and a password`);
      return { ...a, pw: await hashPassword(a.password) };
    }),
  );

  const stmts: string[] = [];
  if (input.rotate === true) {
    // Before the inserts: a row that exists gets the new secret here and its insert below does nothing; a missing
    // row is not touched here and is inserted below with the same values.
    for (const k of keyRows) {
      stmts.push(
        `UPDATE api_keys SET secret_hash = ${sqlLiteral(k.secret_hash)}, prefix = ${sqlLiteral(k.prefix)} ` +
          `WHERE id = ${sqlLiteral(k.id)} RETURNING id AS rotated, revoked_at`,
      );
    }
    for (const a of admins) {
      stmts.push(
        `UPDATE users SET password_hash = ${sqlLiteral(a.pw.hash)}, password_salt = ${sqlLiteral(a.pw.salt)}, ` +
          `password_iterations = ${sqlLiteral(a.pw.iterations)}, failed_logins = 0, locked_until = NULL ` +
          `WHERE id = ${sqlLiteral(a.id)} RETURNING id AS rotated, NULL AS revoked_at`,
      );
    }
  }

  for (const o of Object.values(DEMO_ORGS)) stmts.push(insertMissing('organizations', { id: o.id, name: o.name, created_at: now }));
  for (const b of DEMO_BRANDS) {
    stmts.push(
      insertMissing('brands', {
        id: b.id,
        org_id: b.orgId,
        name: b.name,
        dataset: b.dataset,
        timezone: null,
        created_at: now,
        currency: b.currency,
      }),
    );
    // A state dir seeded before brands had a currency gets it once; a currency an administrator set is kept.
    if (b.currency !== null) {
      stmts.push(`UPDATE brands SET currency = ${sqlLiteral(b.currency)} WHERE id = ${sqlLiteral(b.id)} AND currency IS NULL`);
    }
  }

  for (const k of keyRows) {
    stmts.push(
      insertMissing('api_keys', {
        id: k.id,
        name: k.name,
        prefix: k.prefix,
        secret_hash: k.secret_hash,
        org_id: k.org_id,
        brand_id: k.brand_id,
        max_bytes_billed: null,
        daily_query_limit: null,
        daily_bytes_limit: null,
        created_by_user_id: null,
        created_at: now,
        revoked_at: null,
      }),
    );
  }

  for (const a of admins) {
    stmts.push(
      insertMissing('users', {
        id: a.id,
        email: a.email,
        name: a.name,
        password_hash: a.pw.hash,
        password_salt: a.pw.salt,
        password_iterations: a.pw.iterations,
        failed_logins: 0,
        locked_until: null,
        created_at: now,
      }),
    );
    stmts.push(insertMissing('memberships', { user_id: a.id, org_id: a.org_id, brand_id: a.brand_id, role: 'admin', created_at: now }));
  }

  stmts.push(...(await demoCatalogStatements(input.catalog, now)));
  return stmts;
}
