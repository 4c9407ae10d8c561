#!/usr/bin/env node
// The console's query history (/admin/history) at a realistic query_log size: the same page over 100,000 rows
// against 1,000 rows, both measured in this run (issue 37). Each size gets its own Worker (wrangler's
// unstable_startWorker, as the browser tests start it) on a throwaway local D1 holding the migrations, the demo
// seed and the rows, spread over 30 days (inside the default retention window), the demo keys, an assistant
// connection, three brands and a few outcomes, as a busy deployment's log would be. The org administrator signs in
// through the form; then GET /admin/history (the first page: runs, filters, the 24 h / 7 / 30 day totals) and the
// page filtered to one key, sequentially, RUNS times each. The figure is the p50 ratio of the large log to the
// small one. `node bench/history-page.mjs [--quick]`, or `run()` from `npm run bench`.
import { runIfMain, timeSequential } from './stats.mjs';
import { startSeededWorker } from '../test/node/seeded-worker.mjs';

const DAY_MS = 86_400_000;
/** The demo seed's secrets for this bench (shaped like real ones: prefix + 43 characters). */
const SECRETS = {
  keys: {
    org: `wqk_${'histbenchOrg'.padEnd(43, '0')}`,
    brand: `wqk_${'histbenchBrand'.padEnd(43, '0')}`,
    other: `wqk_${'histbenchOther'.padEnd(43, '0')}`,
  },
  admins: {
    org: { email: 'org-admin@histbench.test', password: 'org-admin-histbench-password' },
    brand: { email: 'brand-admin@histbench.test', password: 'brand-admin-histbench-password' },
  },
};
const SIZES = { small: 1_000, large: 100_000 };

/** `rows` query_log rows in one statement (a recursive count), spread over the 30 days before `now`. */
function logRows(rows, now) {
  return `INSERT INTO query_log (id, request_id, principal_kind, principal_id, brand_id, org_id, user_id, client_name, sql, transport,
      outcome, error_message, bytes_processed, bytes_billed, row_count, duration_ms, created_at)
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows})
    SELECT printf('ql_bench_%08d', i), printf('req_bench_%08d', i),
      CASE WHEN i % 5 = 0 THEN 'oauth' ELSE 'key' END,
      CASE WHEN i % 5 = 0 THEN 'grant_bench' WHEN i % 2 = 0 THEN 'key_demo_org' ELSE 'key_demo_brand' END,
      CASE WHEN i % 2 = 0 THEN 'brand_globex' ELSE 'brand_acme' END, 'org_demo',
      CASE WHEN i % 5 = 0 THEN 'user_demo_org_admin' ELSE NULL END,
      CASE WHEN i % 5 = 0 THEN 'Claude' ELSE NULL END,
      'SELECT day, channel, SUM(revenue) AS revenue FROM \`service-v1.globex.agg__daily_revenue\` WHERE day >= DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY) GROUP BY day, channel ORDER BY day',
      CASE WHEN i % 5 = 0 THEN 'mcp' ELSE 'rest' END,
      CASE WHEN i % 17 = 0 THEN 'QUERY_FAILED' ELSE 'OK' END,
      CASE WHEN i % 17 = 0 THEN 'Unrecognized name: order_total at [1:8]' ELSE NULL END,
      10485760 + i, 10485760 + i, i % 500, 200 + i % 900,
      ${now} - (i * ${Math.floor((30 * DAY_MS) / rows)})
    FROM n`;
}

/**
 * The `name=value` of each Set-Cookie header (Node's fetch has Headers.getSetCookie; the DOM typings this repo
 * checks against do not list it yet).
 * @param {Headers} headers
 * @returns {string[]}
 */
function cookiesOf(headers) {
  const all = /** @type {{ getSetCookie(): string[] }} */ (/** @type {unknown} */ (headers)).getSetCookie();
  return all.map((c) => c.split(';')[0] ?? '');
}

/** Signs in through the form as a browser does; the session cookie. */
async function signIn(baseUrl, admin) {
  const login = await fetch(`${baseUrl}/admin/login`);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await login.text())?.[1];
  if (!csrf) throw new Error('no csrf field on the sign-in page');
  const cookie = cookiesOf(login.headers).join('; ');
  const res = await fetch(`${baseUrl}/admin/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: baseUrl, cookie },
    body: new URLSearchParams({ csrf, intent: 'signin', email: admin.email, password: admin.password }),
  });
  if (res.status !== 303) throw new Error(`sign-in answered ${res.status}`);
  return [cookie, ...cookiesOf(res.headers)].filter(Boolean).join('; ');
}

/** The p50/p99 of `runs` sequential GETs of each page, over a Worker whose log holds `rows` rows. */
async function measure(rows, runs) {
  // PRAGMA optimize after the rows, as the hourly cron runs it after its retention pass (refreshPlannerStatistics in
  // src/features/query-history/retention.ts): a deployment's log has statistics within the hour.
  const extraSql = [logRows(rows, Date.now()), 'PRAGMA optimize'];
  const worker = await startSeededWorker({ prefix: 'wq-bench-history-', ...SECRETS, extraSql });
  try {
    const cookie = await signIn(worker.baseUrl, SECRETS.admins.org);
    const get = async (path) => {
      const res = await fetch(`${worker.baseUrl}${path}`, { headers: { cookie } });
      const html = await res.text();
      if (res.status !== 200 || !html.includes('id="runs-heading"')) throw new Error(`${path} answered ${res.status}`);
    };
    await get('/admin/history'); // warm: the isolate, the session cache
    return {
      page: await timeSequential(runs, () => get('/admin/history')),
      byKey: await timeSequential(runs, () => get('/admin/history?key=key_demo_brand')),
    };
  } finally {
    await worker.stop();
  }
}

/** @param {{ quick?: boolean, runs?: number }} [opts] */
export async function run(opts = {}) {
  const runs = opts.runs ?? (opts.quick ? 8 : 30);
  const small = await measure(SIZES.small, runs);
  const large = await measure(SIZES.large, runs);
  const ms = (p) => `p50 ${p.p50.toFixed(1)} ms p99 ${p.p99.toFixed(1)} ms`;
  return {
    sizes: SIZES,
    runs,
    small,
    large,
    ratio: { page: large.page.p50 / small.page.p50, byKey: large.byKey.p50 / small.byKey.p50 },
    rows: [
      [`GET /admin/history, ${SIZES.small.toLocaleString('en')} log rows (baseline)`, ms(small.page), '', '1.00'],
      [
        `GET /admin/history, ${SIZES.large.toLocaleString('en')} log rows`,
        ms(large.page),
        '',
        `${(large.page.p50 / small.page.p50).toFixed(2)}x baseline`,
      ],
      [`  filtered to one key, ${SIZES.small.toLocaleString('en')} rows (baseline)`, ms(small.byKey), '', '1.00'],
      [
        `  filtered to one key, ${SIZES.large.toLocaleString('en')} rows`,
        ms(large.byKey),
        '',
        `${(large.byKey.p50 / small.byKey.p50).toFixed(2)}x baseline`,
      ],
    ],
  };
}

await runIfMain(import.meta.url, run);
