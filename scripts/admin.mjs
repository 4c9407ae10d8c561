#!/usr/bin/env node
// `npm run admin -- <command>`: manage organizations, brands, administrators and API keys in D1.
// Works on the local database that `npm run dev` / `wrangler dev` use, or with --remote on the deployed one.
// Key generation and password hashing come from the Worker's own modules (src/auth/*), so what this CLI
// writes is exactly what the Worker verifies.
import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { D1Error, openD1, sql, sqlLiteral } from './lib/d1.mjs';
import {
  applySql,
  CatalogRefused,
  catalogModules,
  changedSqlKeys,
  dryRunCatalog,
  exportDir,
  planDir,
  readStored,
  warehouseEnv,
} from './lib/catalog-cli.mjs';
import { consoleCommands } from './lib/console-commands.mjs';
import { importWorkerModules, ROOT } from './lib/import-ts.mjs';
import { brandCredentialsCommands } from './lib/brand-credentials.mjs';

/** The Worker's key settings (src/auth/) and key SQL (src/features/keys/): one definition for the pages and this CLI. */
const keys = await importWorkerModules({
  'src/auth/key-settings.ts': ['KEY_SETTINGS', 'KEY_SETTING_NAMES'],
  'src/features/keys/store.ts': [
    'insertKeyStatement',
    'keyNameTakenMessage',
    'updateKeySettingsStatement',
    'KEY_COLUMNS',
    'KEY_FROM',
    'keyOfRow',
  ],
  'src/features/memories/store.ts': ['inlineStatement'],
});
/** @type {string[]} */
const SETTING_NAMES = keys.KEY_SETTING_NAMES;
/** A store statement as literal SQL for wrangler d1 execute. */
const inline = (/** @type {{ sql: string, params: (string | number | null)[] }} */ s) => keys.inlineStatement(s, sqlLiteral);

const USAGE_ERROR = 2;

class UsageError extends Error {}
class CommandError extends Error {}

const GLOBAL_OPTIONS = {
  remote: { type: 'boolean', default: false },
  local: { type: 'boolean', default: false },
  'persist-to': { type: 'string' },
  env: { type: 'string' },
  config: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
};

const GLOBAL_HELP = `Global options:
  --local              the local D1 database used by \`npm run dev\` / \`wrangler dev\` (default)
  --remote             the deployed D1 database named in wrangler.toml (uses wrangler's Cloudflare login
                       or CLOUDFLARE_API_TOKEN)
  --env NAME           with --remote: the database of wrangler.toml's [env.NAME] (e.g. staging)
  --config FILE        with --remote: another wrangler configuration file (as wrangler's --config)
  --persist-to DIR     local state directory, as wrangler's --persist-to (default .wrangler/state;
                       the environment variable ADMIN_PERSIST_TO sets it too)
  --json               machine-readable output
  -h, --help           help for any command`;

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const DATASET_RE = /^[A-Za-z_][A-Za-z0-9_]{0,1023}$/;
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MIN_PASSWORD_LENGTH = 12;
const WAREHOUSE_CHECK_OPTIONS = {
  'check-warehouse': { type: 'boolean', default: false },
  offline: { type: 'boolean', default: false },
  'env-file': { type: 'string' },
};
const WAREHOUSE_CHECK_HELP = `  The warehouse check (on by default): every SQL the plan adds, changes or moves to other brands is dry-run on the
  warehouse through the Worker's BigQuery client (each section on every brand it applies to, filled for the last
  full month), with each bytes estimate; a dry run the warehouse refuses refuses the folder, at the file, line and
  column BigQuery's error points to.
  --offline          skip the warehouse check: the plan says which changed SQL was not dry-run (a missing table or
                     column then shows only when it runs)
  --check-warehouse  dry-run every section and saved query of the folder, changed or not
  --env-file FILE    the Worker's warehouse variables for the check (BIGQUERY_API_BASE, BIGQUERY_PROJECT,
                     GCP_SERVICE_ACCOUNT_JSON; default .dev.vars, which \`npm run dev\` writes for the local
                     warehouse; with --remote it must be given)`;
const MEMBERSHIP_OPTIONS = { user: { type: 'string' }, org: { type: 'string' }, brand: { type: 'string' } };
/** What `membership add` and `membership remove` name (see requireMembership). */
const MEMBERSHIP_ARGS = '--user USER_ID|EMAIL (--org ORG_ID | --brand BRAND_ID)';
const MEMORY_OWNER_OPTIONS = { system: { type: 'boolean', default: false }, org: { type: 'string' }, brand: { type: 'string' } };
const MEMORY_FIELD_OPTIONS = {
  title: { type: 'string' },
  content: { type: 'string' },
  'content-file': { type: 'string' },
  table: { type: 'string' },
  author: { type: 'string' },
};
/** One `--<flag> N|default` option per key setting. */
const LIMIT_OPTIONS = Object.fromEntries(SETTING_NAMES.map((n) => [keys.KEY_SETTINGS[n].flag, { type: 'string' }]));
const LIMIT_USAGE = SETTING_NAMES.map((n) => `[--${keys.KEY_SETTINGS[n].flag} N]`).join(' ');
const LIMIT_HELP = SETTING_NAMES.map((n) => `  --${keys.KEY_SETTINGS[n].flag} N`.padEnd(28) + keys.KEY_SETTINGS[n].help).join('\n');

/**
 * Every command: its options, help text and implementation. `run(opts, positionals, io)` returns
 * `{ text, json }`: what to print for people and for --json.
 */
const COMMANDS = {
  'org create': {
    usage: 'org create --id ID --name NAME',
    summary: 'create an organization',
    options: { id: { type: 'string' }, name: { type: 'string' } },
    async run(o, _p, io) {
      const id = requireId(o, 'id');
      const name = requireText(o, 'name');
      const rows = await io.exec(
        sql`INSERT INTO organizations (id, name, created_at) VALUES (${id}, ${name}, ${io.now}) ON CONFLICT DO NOTHING RETURNING id`,
      );
      if (rows.length === 0) throw new CommandError(`organization ${id} already exists`);
      return { text: `created organization ${id} (${name})`, json: { id, name } };
    },
  },
  'org list': {
    usage: 'org list',
    summary: 'list organizations',
    options: {},
    async run(_o, _p, io) {
      const rows = await io.exec(
        'SELECT o.id, o.name, (SELECT count(*) FROM brands b WHERE b.org_id = o.id) AS brands FROM organizations o ORDER BY o.id',
      );
      return { text: table(rows, ['id', 'name', 'brands']), json: { organizations: rows } };
    },
  },
  'brand create': {
    usage: 'brand create --id ID --org ORG_ID --name NAME [--dataset DATASET] [--timezone TZ] [--currency CODE]',
    summary: 'create a brand in an organization (without --dataset it is not provisioned)',
    details: `  --dataset   BigQuery dataset in the warehouse project (letters, digits, _); one brand per dataset
  --timezone  IANA time zone deciding "yesterday" and "last full month" for stored-query periods (default UTC)
  --currency  ISO 4217 code the brand's money columns are in (e.g. USD), shown by list_brands (default: none)
  An id a deleted brand left in the query history or the data-issue reports is never given to a new brand: the
  new brand would otherwise be shown the old one's runs and reports (docs/cli.md, "Brand ids are not reused").`,
    options: {
      id: { type: 'string' },
      org: { type: 'string' },
      name: { type: 'string' },
      dataset: { type: 'string' },
      timezone: { type: 'string' },
      currency: { type: 'string' },
    },
    async run(o, _p, io) {
      const id = requireId(o, 'id');
      const org = requireId(o, 'org');
      const name = requireText(o, 'name');
      const dataset = o.dataset === undefined ? null : requireDataset(o.dataset);
      const timezone = o.timezone === undefined ? null : requireTimeZone(o.timezone);
      const currency = o.currency === undefined ? null : requireCurrency(o.currency);
      await refuseReusedBrandId(io, id);
      await io.exec(
        sql`INSERT INTO brands (id, org_id, name, dataset, timezone, currency, created_at) VALUES (${id}, ${org}, ${name}, ${dataset}, ${timezone}, ${currency}, ${io.now})`,
        {
          'FOREIGN KEY': `organization ${org} does not exist`,
          'brands.id': `brand ${id} already exists`,
          'brands.dataset': `dataset ${dataset} already belongs to another brand`,
        },
      );
      return {
        text: `created brand ${id} (${name}) in ${org}${dataset ? `, dataset ${dataset}` : ', no dataset (not provisioned)'}`,
        json: { id, orgId: org, name, dataset, timezone, currency },
      };
    },
  },
  'brand list': {
    usage: 'brand list [--org ORG_ID]',
    summary: 'list brands',
    options: { org: { type: 'string' } },
    async run(o, _p, io) {
      const org = o.org ?? null;
      const rows = await io.exec(
        sql`SELECT id, org_id, name, dataset, timezone, currency FROM brands WHERE ${org} IS NULL OR org_id = ${org} ORDER BY org_id, id`,
      );
      return { text: table(rows, ['id', 'org_id', 'name', 'dataset', 'timezone', 'currency']), json: { brands: rows } };
    },
  },
  'brand update': {
    usage:
      'brand update BRAND_ID [--name NAME] [--dataset DATASET | --no-dataset] [--timezone TZ | --no-timezone] [--currency CODE | --no-currency]',
    summary: "change a brand's name, dataset, time zone or currency",
    details: `  --dataset     provision the brand (or move it to another dataset; one brand per dataset)
  --no-dataset  unprovision it: its queries are refused with BRAND_NOT_PROVISIONED
  --timezone    IANA time zone for stored-query periods; --no-timezone goes back to UTC
  --currency    ISO 4217 code of the brand's money columns; --no-currency: not recorded
  The Worker sees the change within CATALOG_CACHE_TTL_MS.`,
    options: {
      name: { type: 'string' },
      dataset: { type: 'string' },
      'no-dataset': { type: 'boolean', default: false },
      timezone: { type: 'string' },
      'no-timezone': { type: 'boolean', default: false },
      currency: { type: 'string' },
      'no-currency': { type: 'boolean', default: false },
    },
    positional: 'BRAND_ID',
    async run(o, p, io) {
      const id = requirePositional(p, 'the brand id (see `brand list`)');
      if (o.dataset !== undefined && o['no-dataset']) throw new UsageError('give --dataset or --no-dataset, not both');
      if (o.timezone !== undefined && o['no-timezone']) throw new UsageError('give --timezone or --no-timezone, not both');
      if (o.currency !== undefined && o['no-currency']) throw new UsageError('give --currency or --no-currency, not both');
      /** @type {Record<string, string | null>} */
      const set = {};
      if (o.name !== undefined) set.name = requireText(o, 'name');
      if (o.dataset !== undefined) set.dataset = requireDataset(o.dataset);
      if (o['no-dataset']) set.dataset = null;
      if (o.timezone !== undefined) set.timezone = requireTimeZone(o.timezone);
      if (o['no-timezone']) set.timezone = null;
      if (o.currency !== undefined) set.currency = requireCurrency(o.currency);
      if (o['no-currency']) set.currency = null;
      if (Object.keys(set).length === 0)
        throw new UsageError('give at least one of --name, --dataset, --no-dataset, --timezone, --no-timezone, --currency, --no-currency');
      const sets = Object.entries(set).map(([col, v]) => `${col} = ${sql`${v}`}`);
      const rows = await io.exec(
        `UPDATE brands SET ${sets.join(', ')} WHERE id = ${sql`${id}`} RETURNING id, org_id, name, dataset, timezone, currency`,
        {
          'brands.dataset': `dataset ${set.dataset} already belongs to another brand`,
        },
      );
      const row = rows[0];
      if (!row) throw new CommandError(`no brand ${id}`);
      const brand = {
        id: row.id,
        orgId: row.org_id,
        name: row.name,
        dataset: row.dataset,
        timezone: row.timezone,
        currency: row.currency,
      };
      return {
        text:
          `updated brand ${id}: name ${brand.name ?? '-'}, dataset ${brand.dataset ?? '(none: not provisioned)'}, ` +
          `time zone ${brand.timezone ?? 'UTC'}, currency ${brand.currency ?? '(not recorded)'}`,
        json: brand,
      };
    },
  },
  'brand delete': {
    usage: 'brand delete BRAND_ID [--cascade]',
    summary: 'delete a brand; refused while anything belongs to it, unless --cascade deletes that too',
    details: `  Belonging to a brand: its API keys, brand reports and their sections, saved queries, brand memories (with
  their history) and administrator memberships. Without --cascade the command lists them and changes nothing.
  With --cascade all of them go in one batch, and the summary says how many of each. query_log and feedback
  rows keep the brand id as the audit trail.`,
    options: { cascade: { type: 'boolean', default: false } },
    positional: 'BRAND_ID',
    async run(o, p, io) {
      const id = requirePositional(p, 'the brand id (see `brand list`)');
      const dependents = await brandDependents(io, id);
      const present = Object.entries(dependents.counts).filter(([, n]) => n > 0);
      const summary = present.map(([what, n]) => `${n} ${what}`).join(', ');
      if (present.length > 0 && !o.cascade) {
        throw new CommandError(
          `brand ${id} still has ${summary}; delete those first, or run again with --cascade to delete them with the brand`,
        );
      }
      await io.exec(
        [
          sql`DELETE FROM api_keys WHERE brand_id = ${id}`,
          sql`DELETE FROM report_queries WHERE report_id IN (SELECT id FROM reports WHERE brand_id = ${id})`,
          sql`DELETE FROM reports WHERE brand_id = ${id}`,
          sql`DELETE FROM saved_queries WHERE brand_id = ${id}`,
          sql`DELETE FROM memory_revisions WHERE memory_id IN (SELECT id FROM memories WHERE brand_id = ${id})`,
          sql`DELETE FROM memories WHERE brand_id = ${id}`,
          sql`DELETE FROM memberships WHERE brand_id = ${id}`,
          sql`DELETE FROM brands WHERE id = ${id}`,
        ].join(';\n'),
      );
      return {
        text: `deleted brand ${id}${present.length > 0 ? ` with ${summary}` : ''}`,
        json: { id, deleted: true, cascaded: Object.fromEntries(present) },
      };
    },
  },
  ...brandCredentialsCommands({ UsageError, CommandError, requireId, table, iso }),
  'user create': {
    usage: 'user create --email EMAIL [--name NAME] [--password PASSWORD]',
    summary: 'create an administrator login (give it rights with `membership add`)',
    details: `  Without --password: asks for one on a terminal, otherwise generates one and prints it once.
  Passwords are stored as PBKDF2-SHA256 (100,000 iterations, 16-byte random salt), never in clear.`,
    options: { email: { type: 'string' }, name: { type: 'string' }, password: { type: 'string' } },
    async run(o, _p, io) {
      const email = requireText(o, 'email');
      if (!EMAIL_RE.test(email)) throw new UsageError(`--email ${email} is not an email address`);
      const chosen = await choosePassword(o, io);
      const h = chosen.hashed;
      const id = (await io.worker()).newId('user');
      const rows = await io.exec(
        sql`INSERT INTO users (id, email, name, password_hash, password_salt, password_iterations, created_at)
            VALUES (${id}, ${email}, ${o.name === undefined ? null : requireText(o, 'name')}, ${h.hash}, ${h.salt}, ${h.iterations}, ${io.now})
            ON CONFLICT DO NOTHING RETURNING id`,
      );
      if (rows.length === 0) throw new CommandError(`a user with email ${email} already exists`);
      return showingPassword(chosen, `created user ${id} <${email}>`, { id, email, name: o.name ?? null });
    },
  },
  'user set-password': {
    usage: 'user set-password --user USER_ID|EMAIL [--password PASSWORD]',
    summary: "replace a user's password (also clears a sign-in lockout)",
    details: `  Without --password: asks for one on a terminal, otherwise generates one and prints it once.`,
    options: { user: { type: 'string' }, password: { type: 'string' } },
    async run(o, _p, io) {
      const user = requireText(o, 'user');
      const chosen = await choosePassword(o, io);
      const h = chosen.hashed;
      const rows = await io.exec(
        sql`UPDATE users SET password_hash = ${h.hash}, password_salt = ${h.salt}, password_iterations = ${h.iterations},
                             failed_logins = 0, locked_until = NULL
             WHERE id = ${user} OR email = ${user} RETURNING id, email`,
      );
      const row = rows[0];
      if (!row) throw new CommandError(`no user ${user}`);
      // Every source's sign-in lock on the account goes with the old password.
      await io.exec(sql`DELETE FROM login_account_failures WHERE user_id = ${row.id}`);
      return showingPassword(chosen, `password of ${row.id} <${row.email}> replaced`, { id: row.id, email: row.email });
    },
  },
  'user list': {
    usage: 'user list',
    summary: 'list administrator logins and what they administer',
    options: {},
    async run(_o, _p, io) {
      const rows = await io.exec(
        `SELECT u.id, u.email, u.name,
                (SELECT group_concat(COALESCE(m.org_id, m.brand_id), ',') FROM memberships m WHERE m.user_id = u.id) AS administers
           FROM users u ORDER BY u.email`,
      );
      return { text: table(rows, ['id', 'email', 'name', 'administers']), json: { users: rows } };
    },
  },
  'user delete': {
    usage: 'user delete USER_ID|EMAIL [--cascade]',
    summary: 'delete an administrator login; refused while it administers anything, unless --cascade removes those memberships',
    details: `  Its OAuth connections lose access at once (they re-check memberships on every request). Memories and keys it
  wrote keep its name as their author.`,
    options: { cascade: { type: 'boolean', default: false } },
    positional: 'USER',
    async run(o, p, io) {
      const user = requirePositional(p, 'the user id or email (see `user list`)');
      const [row] = await io.exec(
        sql`SELECT u.id, u.email, (SELECT count(*) FROM memberships m WHERE m.user_id = u.id) AS memberships FROM users u WHERE u.id = ${user} OR u.email = ${user}`,
      );
      if (!row) throw new CommandError(`no user ${user}`);
      const n = Number(row.memberships);
      if (n > 0 && !o.cascade) {
        throw new CommandError(
          `user ${row.id} <${row.email}> still administers ${n} organization(s) or brand(s); remove them with \`membership remove\`, or run again with --cascade`,
        );
      }
      await io.exec([sql`DELETE FROM memberships WHERE user_id = ${row.id}`, sql`DELETE FROM users WHERE id = ${row.id}`].join(';\n'));
      return {
        text: `deleted user ${row.id} <${row.email}>${n > 0 ? ` and ${n} membership(s)` : ''}`,
        json: { id: row.id, email: row.email, deleted: true, memberships: n },
      };
    },
  },
  'membership add': {
    usage: `membership add ${MEMBERSHIP_ARGS}`,
    summary: 'make a user administrator of a whole organization or of one brand',
    options: MEMBERSHIP_OPTIONS,
    async run(o, _p, io) {
      const { user, scope } = requireMembership(o);
      const rows = await io.exec(
        sql`INSERT INTO memberships (user_id, org_id, brand_id, role, created_at)
            SELECT u.id, ${scope.orgId}, ${scope.brandId}, 'admin', ${io.now} FROM users u WHERE u.id = ${user} OR u.email = ${user}
            ON CONFLICT DO NOTHING RETURNING user_id`,
        { 'FOREIGN KEY': scope.missing },
      );
      if (rows.length === 0) {
        await requireUser(io, user);
        return { text: `${user} already administers ${scope.kind} ${scope.target}`, json: { userId: user, ...scope.json, created: false } };
      }
      const userId = String(rows[0]?.user_id);
      return { text: `${userId} now administers ${scope.kind} ${scope.target}`, json: { userId, ...scope.json, created: true } };
    },
  },
  'membership remove': {
    usage: `membership remove ${MEMBERSHIP_ARGS}`,
    summary: "remove a user's administrator rights (their OAuth connections lose access at once)",
    options: MEMBERSHIP_OPTIONS,
    async run(o, _p, io) {
      const { user, scope } = requireMembership(o);
      const rows = await io.exec(
        sql`DELETE FROM memberships
             WHERE user_id IN (SELECT id FROM users WHERE id = ${user} OR email = ${user})
               AND org_id IS ${scope.orgId} AND brand_id IS ${scope.brandId}
            RETURNING user_id`,
      );
      if (rows.length === 0) throw new CommandError(`${user} does not administer ${scope.kind} ${scope.target}`);
      return {
        text: `${user} no longer administers ${scope.kind} ${scope.target}`,
        json: { userId: String(rows[0]?.user_id), ...scope.json },
      };
    },
  },
  'membership list': {
    usage: 'membership list [--user USER_ID|EMAIL] [--org ORG_ID] [--brand BRAND_ID]',
    summary: 'list administrator memberships',
    options: MEMBERSHIP_OPTIONS,
    async run(o, _p, io) {
      const user = o.user ?? null;
      const org = o.org ?? null;
      const brand = o.brand ?? null;
      const rows = await io.exec(
        sql`SELECT m.user_id, u.email, m.org_id, m.brand_id, m.role FROM memberships m JOIN users u ON u.id = m.user_id
             WHERE (${user} IS NULL OR u.id = ${user} OR u.email = ${user})
               AND (${org} IS NULL OR m.org_id = ${org}) AND (${brand} IS NULL OR m.brand_id = ${brand})
             ORDER BY u.email, m.org_id, m.brand_id`,
      );
      return { text: table(rows, ['user_id', 'email', 'org_id', 'brand_id', 'role']), json: { memberships: rows } };
    },
  },
  'key create': {
    usage: `key create (--org ORG_ID | --brand BRAND_ID) --name NAME [--memories read|write] ${LIMIT_USAGE}`,
    summary: 'create an API key and print its secret (shown once; only a hash is stored)',
    details: `  An --org key reaches every brand of the organization; a --brand key only that brand (the safer choice).
  NAME is unique among the organization's live keys (its own and its brands'), ignoring case.
  --memories write  the key may also create, change and delete memories inside its scope (default: read)
${LIMIT_HELP}
  Limits default to the Worker's DEFAULT_* variables; see \`key limits\`.`,
    options: {
      org: { type: 'string' },
      brand: { type: 'string' },
      name: { type: 'string' },
      memories: { type: 'string' },
      ...LIMIT_OPTIONS,
    },
    async run(o, _p, io) {
      const scope = requireScope(o);
      const name = requireText(o, 'name');
      const memories = o.memories ?? 'read';
      if (memories !== 'read' && memories !== 'write') throw new UsageError(`--memories must be read or write, got ${memories}`);
      const settings = parseLimits(o);
      const { generateApiKey } = await io.worker();
      const key = await generateApiKey();
      const inserted = await io.exec(
        inline(
          keys.insertKeyStatement({
            id: key.id,
            name,
            prefix: key.prefix,
            secretHash: key.secretHash,
            orgId: scope.orgId,
            brandId: scope.brandId,
            settings,
            memoriesWrite: memories === 'write',
            createdByUserId: null,
            now: io.now,
          }),
        ),
        { 'FOREIGN KEY': scope.missing },
      );
      if (inserted.length === 0) throw new CommandError(keys.keyNameTakenMessage(name));
      return {
        text: `created key ${key.id} "${name}" for ${scope.kind} ${scope.target}, memories ${memories}\nsecret (shown once, store it now; only its hash is kept):\n${key.secret}`,
        json: { id: key.id, name, prefix: key.prefix, secret: key.secret, ...scope.json, memories },
      };
    },
  },
  'key list': {
    usage: 'key list [--org ORG_ID | --brand BRAND_ID]',
    summary: 'list API keys (never their secrets); --org includes the keys of its brands',
    options: { org: { type: 'string' }, brand: { type: 'string' } },
    async run(o, _p, io) {
      if (o.org && o.brand) throw new UsageError('give --org or --brand, not both');
      const org = o.org ?? null;
      const brand = o.brand ?? null;
      const rows = await io.exec(
        `SELECT ${keys.KEY_COLUMNS} FROM ${keys.KEY_FROM}` +
          sql`
             WHERE (${org} IS NULL OR k.org_id = ${org} OR k.brand_id IN (SELECT id FROM brands WHERE org_id = ${org}))
               AND (${brand} IS NULL OR k.brand_id = ${brand})
             ORDER BY k.created_at, k.id`,
      );
      const list = rows.map((r) => {
        const k = keys.keyOfRow(r);
        return {
          id: k.id,
          name: k.name,
          prefix: k.prefix,
          orgId: k.orgId,
          brandId: k.brandId,
          limits: k.settings,
          memories: k.memoriesWrite ? 'write' : 'read',
          createdAt: iso(k.createdAt),
          lastUsedAt: iso(k.lastUsedAt),
          revokedAt: iso(k.revokedAt),
        };
      });
      const display = list.map((k) => ({
        id: k.id,
        name: k.name,
        prefix: `${k.prefix}…`,
        scope: k.orgId ? `org ${k.orgId}` : `brand ${k.brandId}`,
        status: k.revokedAt ? `revoked ${k.revokedAt}` : 'active',
        created: k.createdAt,
        last_used: k.lastUsedAt,
        limits: describeLimits(k.limits),
        memories: k.memories,
      }));
      return {
        text: table(display, ['id', 'name', 'prefix', 'scope', 'status', 'created', 'last_used', 'limits', 'memories']),
        json: { keys: list },
      };
    },
  },
  'key revoke': {
    usage: 'key revoke KEY_ID',
    summary: "revoke an API key (requests with it get 401 within the Worker's AUTH_CACHE_TTL_MS, 1 s by default)",
    options: {},
    positional: 'KEY_ID',
    async run(_o, p, io) {
      const id = requirePositional(p, 'the key id (see `key list`)');
      const rows = await io.exec(sql`UPDATE api_keys SET revoked_at = ${io.now} WHERE id = ${id} AND revoked_at IS NULL RETURNING id`);
      if (rows.length > 0) return { text: `revoked key ${id}`, json: { id, revokedAt: iso(io.now), alreadyRevoked: false } };
      const [prior] = await io.exec(sql`SELECT revoked_at FROM api_keys WHERE id = ${id}`);
      if (!prior) throw new CommandError(`no key ${id}`);
      return {
        text: `key ${id} was already revoked at ${iso(prior.revoked_at)}`,
        json: { id, revokedAt: iso(prior.revoked_at), alreadyRevoked: true },
      };
    },
  },
  'key delete': {
    usage: 'key delete KEY_ID',
    summary: 'delete a revoked API key (revoke it first with `key revoke`); its query log stays',
    options: {},
    positional: 'KEY_ID',
    async run(_o, p, io) {
      const id = requirePositional(p, 'the key id (see `key list`)');
      const [row] = await io.exec(sql`SELECT id, revoked_at FROM api_keys WHERE id = ${id}`);
      if (!row) throw new CommandError(`no key ${id}`);
      if (row.revoked_at === null) throw new CommandError(`key ${id} is live; revoke it first (\`key revoke ${id}\`), then delete it`);
      await io.exec([sql`DELETE FROM api_keys WHERE id = ${id} AND revoked_at IS NOT NULL`].join(';\n'));
      return { text: `deleted key ${id}`, json: { id, deleted: true } };
    },
  },
  'key limits': {
    usage: `key limits KEY_ID ${LIMIT_USAGE}`,
    summary: "show or change a live key's own limits",
    details: `${LIMIT_HELP}
  N is a positive integer, or "default" to fall back to the Worker's DEFAULT_* variable.
  Without options, prints the key's current limits.`,
    options: { ...LIMIT_OPTIONS },
    positional: 'KEY_ID',
    async run(o, p, io) {
      const id = requirePositional(p, 'the key id (see `key list`)');
      const [row] = await io.exec(inline(keys.updateKeySettingsStatement(id, parseLimits(o), 'all')));
      if (!row) throw new CommandError(`no live key ${id}`);
      const out = Object.fromEntries(SETTING_NAMES.map((n) => [n, row[keys.KEY_SETTINGS[n].column]]));
      return { text: `key ${id} limits: ${describeLimits(out)}`, json: { id, limits: out } };
    },
  },
  'catalog plan': {
    usage: 'catalog plan DIR [--prune] [--offline | --check-warehouse] [--env-file FILE]',
    summary: 'check a catalog folder and show what `catalog apply` would add, change and remove',
    details: `  DIR holds reports/, saved-queries/ and memories/ (docs/catalog.md). Every file is checked first: JSON,
  fields, unique ids, known slots, the SQL guard for every brand an item applies to, chart and dashboard shapes;
  each refusal names the file, the item and the line. Items in the database but not in DIR are removed only
  with --prune (shown, marked kept, without it). --json prints the plan with its planHash.
${WAREHOUSE_CHECK_HELP}`,
    options: { prune: { type: 'boolean', default: false }, ...WAREHOUSE_CHECK_OPTIONS },
    positional: 'DIR',
    async run(o, p, io) {
      const dir = requirePositional(p, 'the catalog folder');
      const planned = await catalogPlan(io, dir, o);
      return {
        text: `${describeLive(planned.live)}\n${(await io.catalog()).renderPlan(planned.plan)}\nplan ${planned.plan.planHash}${warningText(planned.warnings)}${estimateText(planned)}`,
        json: planJson(dir, planned),
      };
    },
  },
  'catalog apply': {
    usage: 'catalog apply DIR [--prune] [--expect PLAN_HASH] [--author NAME] [--offline | --check-warehouse] [--env-file FILE]',
    summary: 'apply a catalog folder: exactly the plan `catalog plan` shows, in one batch (all or nothing), recorded',
    details: `  --expect  the planHash \`catalog plan\` printed: refuse if the plan differs now (the folder or the database changed)
  --author  who applies, recorded in catalog_versions and on memory writes (default: admin CLI and your OS user)
  The version (content hash, who, when, the plan's summary) is written in the same batch.
${WAREHOUSE_CHECK_HELP}`,
    options: {
      prune: { type: 'boolean', default: false },
      expect: { type: 'string' },
      author: { type: 'string' },
      ...WAREHOUSE_CHECK_OPTIONS,
    },
    positional: 'DIR',
    async run(o, p, io) {
      const dir = requirePositional(p, 'the catalog folder');
      const planned = await catalogPlan(io, dir, o);
      const c = await io.catalog();
      if (typeof o.expect === 'string' && o.expect !== planned.plan.planHash) {
        throw new CommandError(
          `the plan is not the one expected (now ${planned.plan.planHash}, expected ${o.expect}): run catalog plan again and review it`,
        );
      }
      if (c.planIsEmpty(planned.plan)) {
        return { text: `${c.renderPlan(planned.plan)}\nnothing applied`, json: { ...planJson(dir, planned), applied: false } };
      }
      await io.exec(await applySql(planned, { author: cliAuthor(o), now: io.now, source: dir }));
      const { live } = await readStored((statements) => io.exec(statements, {}, { all: true }));
      return {
        text: `${c.renderPlan(planned.plan)}\napplied: ${describeLive(live)}${warningText(planned.warnings)}${estimateText(planned)}`,
        json: { ...planJson(dir, planned), applied: true, live },
      };
    },
  },
  'catalog export': {
    usage: 'catalog export DIR [--org ORG_ID]',
    summary: "write the database's reports, saved queries and memories as a catalog folder (`catalog plan DIR` then shows no change)",
    details: `  Replaces DIR's reports/, saved-queries/ and memories/ folders; other files in DIR stay. Deleted memories are
  not exported.
  --org ORG_ID  only that organization's items: its org reports and memories and its brands' reports, saved queries
                and memories (no system items, no other organization's). Plan such a folder without --prune: the
                items it leaves out show as kept.`,
    options: { org: { type: 'string' } },
    positional: 'DIR',
    async run(o, p, io) {
      const dir = requirePositional(p, 'the catalog folder');
      const org = typeof o.org === 'string' ? o.org : undefined;
      const out = await exportDir({ dir, org, readAll: (statements) => io.exec(statements, {}, { all: true }) }).catch((e) => {
        throw e instanceof Error && e.message.startsWith('no organization') ? new CommandError(e.message) : e;
      });
      const c = out.catalog;
      const counts = { reports: c.reports.length, savedQueries: c.savedQueries.length, memories: c.memories.length };
      return {
        text: `exported ${counts.reports} reports, ${counts.savedQueries} saved queries and ${counts.memories} memories${org ? ` of ${org}` : ''} to ${dir}`,
        json: { dir, ...(org ? { org } : {}), ...counts },
      };
    },
  },
  'memory list': {
    usage: 'memory list [--system | --org ORG_ID | --brand BRAND_ID] [--table TABLE] [--deleted]',
    summary: 'list memories (context about tables), newest change first; --org includes the memories of its brands',
    details: `  --deleted  also list deleted memories (restore them with \`memory restore\`)`,
    options: { ...MEMORY_OWNER_OPTIONS, table: { type: 'string' }, deleted: { type: 'boolean', default: false } },
    async run(o, _p, io) {
      if ([o.system, o.org, o.brand].filter(Boolean).length > 1) throw new UsageError('give at most one of --system, --org, --brand');
      const org = o.org ?? null;
      const brand = o.brand ?? null;
      const rows = await io.exec(
        sql`SELECT m.id, m.scope, COALESCE(m.brand_id, m.org_id) AS owner, m.table_name, m.title, m.content, m.author_name,
                   m.updated_by_name, m.updated_at, m.deleted_at
              FROM memories m
             WHERE (${o.system ? 1 : 0} = 0 OR m.scope = 'system')
               AND (${org} IS NULL OR m.org_id = ${org} OR m.brand_id IN (SELECT id FROM brands WHERE org_id = ${org}))
               AND (${brand} IS NULL OR m.brand_id = ${brand})
               AND (${o.table ?? null} IS NULL OR m.table_name = ${o.table ?? null})
               AND (${o.deleted ? 1 : 0} = 1 OR m.deleted_at IS NULL)
             ORDER BY m.updated_at DESC, m.id`,
      );
      const memories = rows.map((r) => ({
        id: r.id,
        scope: r.scope,
        owner: r.owner,
        table: r.table_name,
        title: r.title,
        content: r.content,
        author: r.author_name,
        updatedBy: r.updated_by_name,
        updatedAt: iso(r.updated_at),
        deletedAt: iso(r.deleted_at),
      }));
      const display = memories.map((m) => ({ ...m, owner: m.owner ?? 'system', status: m.deletedAt ? `deleted ${m.deletedAt}` : 'live' }));
      return { text: table(display, ['id', 'scope', 'owner', 'table', 'title', 'updatedBy', 'updatedAt', 'status']), json: { memories } };
    },
  },
  'memory create': {
    usage:
      'memory create (--system | --org ORG_ID | --brand BRAND_ID) --title TITLE (--content TEXT | --content-file PATH) [--table TABLE] [--author NAME]',
    summary: 'create a memory; `system` memories (every brand of every organization) are written only here',
    details: `  --table   a table of the brand's dataset the memory is about (e.g. fact__orders); omit for general context
  --author  display name recorded as the writer (default: admin CLI and your OS user name)
  Limits: title 200 characters, content 8 KB of UTF-8, 200 live memories per brand, per organization and for system.`,
    options: { ...MEMORY_OWNER_OPTIONS, ...MEMORY_FIELD_OPTIONS },
    async run(o, _p, io) {
      const owner = requireMemoryOwner(o);
      const fields = await memoryFields(o, io, { create: true });
      const id = (await io.memories()).newId('mem');
      await memoryWrite(
        io,
        o,
        (m, write) =>
          m.createMemoryStatements({ id, ...owner, table: fields.table ?? null, title: fields.title, content: fields.content }, write),
        (m) => `${owner.label} already has ${m.MEMORY_LIMITS.perOwner} memories, the most it can have`,
        { 'FOREIGN KEY': owner.missing },
      );
      const memory = await readMemory(io, id);
      return { text: `created memory ${id} (${owner.label}): ${memory.title}`, json: memory };
    },
  },
  'memory update': {
    usage: 'memory update MEMORY_ID [--title TITLE] [--content TEXT | --content-file PATH] [--table TABLE | --no-table] [--author NAME]',
    summary: "change a memory's title, content or table (scope and owner are fixed)",
    options: { ...MEMORY_FIELD_OPTIONS, 'no-table': { type: 'boolean', default: false } },
    positional: 'MEMORY_ID',
    async run(o, p, io) {
      const id = requirePositional(p, 'the memory id (see `memory list`)');
      if (o.table !== undefined && o['no-table']) throw new UsageError('give --table or --no-table, not both');
      const fields = await memoryFields(o, io, { create: false });
      await memoryWrite(
        io,
        o,
        (m, write) => m.updateMemoryStatements(id, fields, write),
        () => `no live memory ${id}`,
      );
      const memory = await readMemory(io, id);
      return { text: `updated memory ${id}: ${memory.title}`, json: memory };
    },
  },
  'memory delete': {
    usage: 'memory delete MEMORY_ID [--author NAME]',
    summary: 'delete a memory (kept in the record; `memory restore` or the admin pages bring it back)',
    options: { author: { type: 'string' } },
    positional: 'MEMORY_ID',
    async run(o, p, io) {
      const id = requirePositional(p, 'the memory id (see `memory list`)');
      await memoryWrite(
        io,
        o,
        (m, write) => m.deleteMemoryStatements(id, write),
        () => `no live memory ${id}`,
      );
      return { text: `deleted memory ${id}`, json: { id, deleted: true } };
    },
  },
  'memory restore': {
    usage: 'memory restore MEMORY_ID [--author NAME]',
    summary: 'restore a deleted memory',
    options: { author: { type: 'string' } },
    positional: 'MEMORY_ID',
    async run(o, p, io) {
      const id = requirePositional(p, 'the memory id (see `memory list --deleted`)');
      await memoryWrite(
        io,
        o,
        (m, write) => m.restoreMemoryStatements(id, write),
        (m) => `no deleted memory ${id}, or its owner already has ${m.MEMORY_LIMITS.perOwner} memories`,
      );
      const memory = await readMemory(io, id);
      return { text: `restored memory ${id}: ${memory.title}`, json: memory };
    },
  },
  // The data-issue inbox and the query history (scripts/lib/console-commands.mjs).
  ...consoleCommands({ UsageError, CommandError, iso, table, sql, sqlLiteral }),
};

// ---------------------------------------------------------------------------------------------------------

function requirePositional(p, what) {
  const v = p[0];
  if (!v) throw new UsageError(`give ${what}`);
  return v;
}

/** The owner of a new memory: exactly one of --system, --org, --brand. */
function requireMemoryOwner(o) {
  if ([o.system, o.org, o.brand].filter(Boolean).length !== 1)
    throw new UsageError('give exactly one of --system, --org ORG_ID or --brand BRAND_ID');
  if (o.system) return { scope: 'system', orgId: null, brandId: null, label: 'system', missing: 'system' };
  if (o.org)
    return { scope: 'org', orgId: o.org, brandId: null, label: `organization ${o.org}`, missing: `organization ${o.org} does not exist` };
  return { scope: 'brand', orgId: null, brandId: o.brand, label: `brand ${o.brand}`, missing: `brand ${o.brand} does not exist` };
}

/**
 * Title, content (--content or --content-file) and table, checked by the API's own request schema so the CLI refuses
 * exactly what REST and MCP refuse, with the same messages.
 */
async function memoryFields(o, io, { create }) {
  if (o.content !== undefined && o['content-file'] !== undefined) throw new UsageError('give --content or --content-file, not both');
  const content = o['content-file'] !== undefined ? await readFile(o['content-file'], 'utf8') : o.content;
  if (create && (o.title === undefined || content === undefined))
    throw new UsageError('--title and --content (or --content-file) are required');
  const table = o['no-table'] ? null : o.table;
  const fields = Object.fromEntries(Object.entries({ title: o.title, content, table }).filter(([, v]) => v !== undefined));
  const parsed = (await io.memories()).MemoryFieldsSchema.safeParse(fields);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(issue?.path.length ? `--${String(issue.path[0])}: ${issue.message}` : (issue?.message ?? 'invalid memory'));
  }
  return parsed.data;
}

/** The CLI's write record: kind cli, the --author name or "admin CLI (<OS user>)". */
function cliWrite(o, m) {
  return {
    revisionId: m.newId('mrev'),
    actor: { kind: 'cli', id: null, name: cliAuthor(o) },
    transport: 'cli',
    requestId: null,
    now: Date.now(),
  };
}

/** Who a CLI write is recorded as: --author, else "admin CLI (<OS user>)". */
function cliAuthor(o) {
  if (typeof o.author === 'string') return o.author;
  try {
    return `admin CLI (${userInfo().username})`;
  } catch {
    // No passwd entry (some containers): the plain name will do.
    return 'admin CLI';
  }
}

/**
 * Runs one memory write: the statements `build` makes with the store's modules and the CLI's write record, in one
 * batch; the error `refused` words when a guard did not let it apply (nothing changed).
 * @param {Record<string, string>} [constraintMessages] as io.exec's
 */
async function memoryWrite(io, o, build, refused, constraintMessages = {}) {
  const m = await io.memories();
  const statements = build(m, cliWrite(o, m));
  const results = await io.exec(statements.map((s) => m.inlineStatement(s, sqlLiteral)).join(';\n'), constraintMessages, { all: true });
  if (!results.every((r) => r.length > 0)) throw new CommandError(refused(m));
}

async function readMemory(io, id) {
  const m = await io.memories();
  const [row] = await io.exec(`SELECT ${m.MEMORY_COLUMNS} FROM memories m WHERE m.id = ${sql`${id}`}`);
  return m.toMemory(m.MemoryRowSchema.parse(row));
}

/** The catalog folder `dir` checked and planned against the database; a refusal lists every problem. */
async function catalogPlan(io, dir, o) {
  const planned = await planDir({
    dir,
    prune: o.prune === true,
    project: warehouseProject(),
    readAll: (statements) => io.exec(statements, {}, { all: true }),
  }).catch((e) => {
    if (e && typeof e === 'object' && 'code' in e && e.code === 'ENOENT') throw new CommandError(`no catalog folder ${dir}`);
    throw e;
  });
  if (planned.problems.length > 0) throw new CatalogRefused(planned.problems);
  if (o.offline && o['check-warehouse']) throw new UsageError('give --offline or --check-warehouse, not both');
  const changed = changedSqlKeys(planned.plan, planned.loaded.catalog);
  const itemOf = (key) => key.replace(/^section:/, 'section ').replace(/^saved:/, 'saved query ');
  if (o.offline) return { ...planned, dryRuns: null, notDryRun: [...changed].map(itemOf) };
  const only = o['check-warehouse'] ? null : changed;
  if (only && only.size === 0) return { ...planned, dryRuns: null, notDryRun: [] };
  if (o.remote === true && typeof o['env-file'] !== 'string') {
    throw new CommandError(
      `the warehouse check of a --remote catalog needs the deployment's warehouse variables: give --env-file FILE (BIGQUERY_PROJECT, GCP_SERVICE_ACCOUNT_JSON), or --offline to skip it`,
    );
  }
  const envFile = typeof o['env-file'] === 'string' ? o['env-file'] : join(ROOT, '.dev.vars');
  const env = await warehouseEnv(envFile).catch((e) => {
    throw new CommandError(
      `the warehouse check (on by default) needs the Worker's warehouse variables: cannot read ${envFile} (${e instanceof Error ? e.message : String(e)}); give --env-file FILE, or --offline to skip the check`,
    );
  });
  const dryRuns = await dryRunCatalog(planned, env, (statements) => io.exec(statements, {}, { all: true }), only);
  if (dryRuns.problems.length > 0) throw new CatalogRefused(dryRuns.problems);
  return { ...planned, dryRuns, notDryRun: [] };
}

function estimateText(planned) {
  const { dryRuns, notDryRun } = planned;
  if (!dryRuns) {
    return notDryRun.length > 0
      ? `\nnot checked against the warehouse (--offline): ${notDryRun.length} changed SQL not dry-run (${notDryRun.join(', ')}); a missing table or column shows only when it runs`
      : '\nno changed SQL to dry-run on the warehouse';
  }
  const lines = dryRuns.estimates.map((e) => `  ${e.item} on ${e.brand}: ${e.bytes.toLocaleString('en-US')} bytes`);
  return `\nwarehouse dry runs (${dryRuns.window.start_date} to ${dryRuns.window.end_date}), bytes processed:\n${lines.join('\n')}`;
}

/** The warehouse project catalog SQL must name: BIGQUERY_PROJECT of wrangler.toml's [vars]. */
function warehouseProject() {
  const m = /^BIGQUERY_PROJECT\s*=\s*"([^"]+)"/m.exec(readFileSync(join(ROOT, 'wrangler.toml'), 'utf8'));
  if (!m?.[1]) throw new CommandError('wrangler.toml has no BIGQUERY_PROJECT in [vars]');
  return m[1];
}

function describeLive(live) {
  return live
    ? `live catalog version ${String(live.content_hash).slice(0, 12)} applied by ${live.applied_by} at ${iso(live.applied_at)} (${live.summary})`
    : 'no catalog version recorded yet';
}

function warningText(warnings) {
  return warnings.length > 0 ? `\nnot checked:\n${warnings.map((w) => `  ${w}`).join('\n')}` : '';
}

function planJson(dir, planned) {
  const { entries, counts, contentHash, planHash, prune } = planned.plan;
  return {
    dir,
    live: planned.live,
    plan: { entries, counts, contentHash, planHash, prune },
    warnings: planned.warnings,
    ...(planned.dryRuns ? { dryRuns: { window: planned.dryRuns.window, estimates: planned.dryRuns.estimates } } : {}),
    notDryRun: planned.notDryRun,
  };
}

/**
 * Brand ids are not reused: an id a deleted brand left in query_log or feedback (the audit trail `brand delete`
 * keeps) is refused, so a new brand, in whatever organization, inherits none of the old one's runs or reports.
 */
async function refuseReusedBrandId(io, id) {
  const [row] = await io.exec(
    sql`SELECT NOT EXISTS (SELECT 1 FROM brands WHERE id = ${id})
               AND (EXISTS (SELECT 1 FROM query_log WHERE brand_id = ${id}) OR EXISTS (SELECT 1 FROM feedback WHERE brand_id = ${id})) AS used`,
  );
  if (Number(row?.used) === 1) {
    throw new CommandError(
      `brand id ${id} belonged to a deleted brand whose query history and data-issue reports keep it; brand ids are not reused, choose another id`,
    );
  }
}

/** What belongs to a brand (what `brand delete` refuses over, or deletes with --cascade). */
async function brandDependents(io, id) {
  const [row] = await io.exec(
    sql`SELECT (SELECT count(*) FROM brands WHERE id = ${id}) AS brand,
               (SELECT count(*) FROM api_keys WHERE brand_id = ${id}) AS keys,
               (SELECT count(*) FROM reports WHERE brand_id = ${id}) AS reports,
               (SELECT count(*) FROM saved_queries WHERE brand_id = ${id}) AS saved_queries,
               (SELECT count(*) FROM memories WHERE brand_id = ${id}) AS memories,
               (SELECT count(*) FROM memberships WHERE brand_id = ${id}) AS memberships`,
  );
  if (!row || Number(row.brand) === 0) throw new CommandError(`no brand ${id}`);
  return {
    counts: {
      'API key(s)': Number(row.keys),
      'report(s)': Number(row.reports),
      'saved query(ies)': Number(row.saved_queries),
      'memory(ies)': Number(row.memories),
      'membership(s)': Number(row.memberships),
    },
  };
}

function requireDataset(dataset) {
  if (!DATASET_RE.test(dataset))
    throw new UsageError('--dataset must be a BigQuery dataset id: letters, digits and underscores, not starting with a digit');
  return dataset;
}

function requireTimeZone(tz) {
  if (!isTimeZone(tz)) throw new UsageError(`--timezone ${tz} is not an IANA time zone`);
  return tz;
}

/** An ISO 4217 code the runtime knows (Intl's list), upper-cased: `usd` is USD, `XYZ` is refused. */
function requireCurrency(code) {
  const upper = code.toUpperCase();
  if (!/^[A-Z]{3}$/.test(upper) || !Intl.supportedValuesOf('currency').includes(upper))
    throw new UsageError(`--currency ${code} is not an ISO 4217 currency code (e.g. USD, EUR, GBP)`);
  return upper;
}

function requireId(o, flag) {
  const v = o[flag];
  if (v === undefined) throw new UsageError(`--${flag} is required`);
  if (!ID_RE.test(v)) throw new UsageError(`--${flag} must be 1-64 letters, digits, _ or -, starting with a letter or digit`);
  return v;
}

function requireText(o, flag) {
  const v = o[flag];
  if (v === undefined || v.trim() === '') throw new UsageError(`--${flag} is required`);
  // Names and emails are shown on the admin pages: no control characters (src/lib/text.ts states the same rule).
  const control = /[\u0000-\u001F\u007F-\u009F]/u.exec(v);
  if (control)
    throw new UsageError(
      `--${flag} must not contain control characters (found U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')})`,
    );
  return v;
}

/** --user and exactly one of --org / --brand: one membership. */
function requireMembership(o) {
  return { user: requireText(o, 'user'), scope: requireScope(o) };
}

function requireScope(o) {
  if (!!o.org === !!o.brand) throw new UsageError('give exactly one of --org ORG_ID or --brand BRAND_ID');
  const orgId = o.org ?? null;
  const brandId = orgId ? null : o.brand;
  const kind = orgId ? 'org' : 'brand';
  const target = orgId ?? brandId;
  return {
    kind,
    target,
    orgId,
    brandId,
    json: { orgId, brandId },
    missing: `${orgId ? 'organization' : 'brand'} ${target} does not exist`,
  };
}

/**
 * --password, or one typed twice on a terminal, or (no terminal) a generated one the caller prints once (see
 * showingPassword); with its hash as the Worker stores it.
 */
async function choosePassword(o, io) {
  const given = o.password !== undefined ? o.password : io.interactive ? await promptPassword() : undefined;
  if (given !== undefined && given.length < MIN_PASSWORD_LENGTH)
    throw new UsageError(`the password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  const { hashPassword, randomBase64Url } = await io.worker();
  const password = given ?? randomBase64Url(18);
  return { password, generated: given === undefined, hashed: await hashPassword(password) };
}

/** A command's result, with the password added (shown once) when it was generated rather than given. */
function showingPassword({ password, generated }, text, json) {
  return generated ? { text: `${text}\npassword (shown once): ${password}`, json: { ...json, password } } : { text, json };
}

async function requireUser(io, user) {
  const rows = await io.exec(sql`SELECT id FROM users WHERE id = ${user} OR email = ${user}`);
  if (rows.length === 0) throw new CommandError(`no user ${user}`);
}

/** Limit flags present in `o`, as column -> value (null = back to the default). */
/** The settings given as options, by setting name (null for "default"); absent ones are left out. */
function parseLimits(o) {
  /** @type {Record<string, number | null>} */
  const out = {};
  for (const n of SETTING_NAMES) {
    const flag = keys.KEY_SETTINGS[n].flag;
    const v = o[flag];
    if (v === undefined) continue;
    if (v === 'default') {
      out[n] = null;
      continue;
    }
    const num = /^[0-9]+$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(num) || num <= 0) throw new UsageError(`--${flag} must be a positive integer or "default", got ${v}`);
    out[n] = num;
  }
  return out;
}

function describeLimits(l) {
  const f = (v) => (v === null || v === undefined ? 'default' : String(v));
  return SETTING_NAMES.map((n) => `${keys.KEY_SETTINGS[n].flag}=${f(l[n])}`).join(' ');
}

function isTimeZone(tz) {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function iso(ms) {
  return typeof ms === 'number' ? new Date(ms).toISOString() : null;
}

function table(rows, cols) {
  if (rows.length === 0) return '(none)';
  const cell = (v) => (v === null || v === undefined ? '-' : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals) =>
    vals
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(cols), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n');
}

/** Reads a password twice from the terminal without echoing it. */
async function promptPassword() {
  const ask = (q) =>
    new Promise((resolve) => {
      // Echo nothing while the password is typed; readline writes through its (undocumented) _writeToOutput.
      const rl = /** @type {import('node:readline').Interface & { _writeToOutput: (s: string) => void }} */ (
        createInterface({ input: process.stdin, output: process.stderr, terminal: true })
      );
      rl._writeToOutput = (s) => {
        if (s.includes(q)) process.stderr.write(q);
      };
      rl.question(q, (answer) => {
        rl.close();
        process.stderr.write('\n');
        resolve(answer);
      });
    });
  const first = await ask('password: ');
  const second = await ask('repeat password: ');
  if (first !== second) throw new UsageError('the passwords differ');
  return first;
}

/** Short form for usage errors: the message, the command's usage line and where the full help is. */
function usageHint(name, message) {
  return `${message}\nusage: npm run admin -- ${COMMANDS[name].usage}\n(see \`npm run admin -- ${name} --help\`)`;
}

function commandHelp(name) {
  const c = COMMANDS[name];
  return [
    `usage: npm run admin -- ${c.usage} [global options]`,
    '',
    `${c.summary}.`,
    ...(c.details ? ['', c.details] : []),
    '',
    GLOBAL_HELP,
  ].join('\n');
}

function groupHelp(group) {
  const names = Object.keys(COMMANDS).filter((n) => !group || n.startsWith(`${group} `));
  const lines = names.map((n) => `  ${COMMANDS[n].usage}\n      ${COMMANDS[n].summary}`);
  return [
    `usage: npm run admin -- <command> [options]`,
    '',
    'Commands:',
    ...lines,
    '',
    GLOBAL_HELP,
    '',
    'Run `npm run admin -- <command> --help` for one command.',
  ].join('\n');
}

function mapConstraintError(err, messages) {
  if (!(err instanceof D1Error)) return err;
  if (err.message.includes('no such table')) {
    return new CommandError(
      `${err.message}\nthe database has no schema yet: run \`npm run dev\` once, or \`npx wrangler d1 migrations apply DB --local\` (--remote for the deployed one)`,
    );
  }
  for (const [needle, message] of Object.entries(messages)) {
    if (err.message.includes(needle)) return new CommandError(message);
  }
  return err;
}

/**
 * Where a run of the CLI reads and writes: the database (`openD1`, given the target the flags chose), its two
 * output streams, and whether a person is at a terminal to type a password. The command line passes the real
 * ones; tests pass a local D1 they keep open across commands and collect the output.
 * @typedef {object} AdminIo
 * @property {(target: import('./lib/d1.mjs').D1Target) => Promise<import('./lib/d1.mjs').D1Executor>} openD1
 * @property {(text: string) => void} out
 * @property {(text: string) => void} err
 * @property {boolean} interactive
 */

/** @type {AdminIo} */
const PROCESS_IO = {
  openD1,
  out: (text) => console.log(text),
  err: (text) => console.error(text),
  interactive: Boolean(process.stdin.isTTY && process.stderr.isTTY),
};

/** Worker modules, bundled once per process however many commands run. */
let workerModules;
/** The memory store's modules (memory commands only), bundled once per process. */
let memoryModules;

/**
 * Runs one CLI invocation (`argv` without `node admin.mjs`) and returns its exit code.
 * @param {string[]} argv
 * @param {AdminIo} [env]
 */
export async function runAdmin(argv, env = PROCESS_IO) {
  // A command is two words (`key create`) or three (`brand credentials set`): the longest that names one.
  const words = argv[2] !== undefined && COMMANDS[argv.slice(0, 3).join(' ')] ? 3 : 2;
  const [group, action] = words === 3 ? [argv.slice(0, 2).join(' '), argv[2]] : argv;
  const groupOnly = group && !group.startsWith('-') && Object.keys(COMMANDS).some((n) => n.startsWith(`${group} `));
  const name = `${group} ${action}`;
  if (!group || group === '--help' || group === '-h' || group === 'help') {
    env.out(groupHelp());
    return 0;
  }
  if (!COMMANDS[name]) {
    if (groupOnly && (!action || action === '--help' || action === '-h')) {
      env.out(groupHelp(group));
      return 0;
    }
    env.err(`unknown command: ${argv.slice(0, 2).join(' ')}\n\n${groupHelp(groupOnly ? group : undefined)}`);
    return USAGE_ERROR;
  }
  const command = COMMANDS[name];
  let parsed;
  try {
    parsed = parseArgs({
      args: argv.slice(words),
      options: { ...GLOBAL_OPTIONS, ...command.options },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    env.err(usageHint(name, e instanceof Error ? e.message : String(e)));
    return USAGE_ERROR;
  }
  /** The flags as parseArgs returns them: a string per value option, a boolean per switch. */
  const o = /** @type {Record<string, string | boolean | undefined>} */ (parsed.values);
  if (o.help) {
    env.out(commandHelp(name));
    return 0;
  }
  const maxPositionals = command.positional ? 1 : 0;
  if (parsed.positionals.length > maxPositionals) {
    env.err(usageHint(name, `unexpected argument: ${parsed.positionals[maxPositionals]}`));
    return USAGE_ERROR;
  }
  const remote = o.remote === true;
  const persistTo = typeof o['persist-to'] === 'string' ? o['persist-to'] : undefined;
  if (remote && (o.local || persistTo !== undefined)) {
    env.err('--remote cannot be combined with --local or --persist-to');
    return USAGE_ERROR;
  }
  const envName = typeof o.env === 'string' ? o.env : undefined;
  const config = typeof o.config === 'string' ? o.config : undefined;
  if ((envName !== undefined || config !== undefined) && !remote) {
    env.err('--env and --config name a deployed environment: use them with --remote');
    return USAGE_ERROR;
  }
  const target = { remote, env: envName, config, persistTo: remote ? undefined : (persistTo ?? process.env.ADMIN_PERSIST_TO ?? undefined) };
  /** @type {import('./lib/d1.mjs').D1Executor | undefined} */
  let db;
  const io = {
    now: Date.now(),
    target,
    interactive: env.interactive,
    /** The last statement's rows, or with `all` every statement's. */
    async exec(statement, constraintMessages = {}, { all = false } = {}) {
      try {
        db ??= await env.openD1(target);
        const results = await db.execute(statement);
        return all ? results : (results[results.length - 1] ?? []);
      } catch (e) {
        throw mapConstraintError(e, constraintMessages);
      }
    },
    async worker() {
      workerModules ??= await importWorkerModules({
        'src/auth/api-keys.ts': ['generateApiKey'],
        'src/auth/passwords.ts': ['hashPassword'],
        'src/lib/ids.ts': ['newId', 'randomBase64Url'],
      });
      return workerModules;
    },
    catalog: catalogModules,
    async memories() {
      memoryModules ??= await importWorkerModules({
        'src/features/memories/store.ts': [
          'createMemoryStatements',
          'updateMemoryStatements',
          'deleteMemoryStatements',
          'restoreMemoryStatements',
          'inlineStatement',
          'MEMORY_COLUMNS',
          'MemoryRowSchema',
          'toMemory',
        ],
        'src/features/memories/rules.ts': ['MEMORY_LIMITS'],
        'src/features/memories/fields.ts': ['MemoryFieldsSchema'],
        'src/lib/ids.ts': ['newId'],
      });
      return memoryModules;
    },
  };
  try {
    const result = await command.run(o, parsed.positionals, io);
    env.out(o.json ? JSON.stringify(result.json, null, 2) : result.text);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      env.err(usageHint(name, e.message));
      return USAGE_ERROR;
    }
    if (e instanceof CommandError || e instanceof D1Error || e instanceof CatalogRefused) {
      env.err(`error: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    await db?.close();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await runAdmin(process.argv.slice(2));
}
