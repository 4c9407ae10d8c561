// Wildcard tables in the local warehouse, as BigQuery documents them
// (https://cloud.google.com/bigquery/docs/querying-wildcard-tables): the union of the dataset's tables matching the
// prefix, a `_TABLE_SUFFIX` pseudo column that `SELECT *` leaves out, every matched shard in the dry run's
// referencedTables, and nothing outside the named dataset. The demo shards are umbrella's events_YYYYMMDD.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARDED, shardNames } from '../../dev/warehouse/demo-data.mjs';
import { createServiceAccount, signServiceAccountJwt } from '../../dev/warehouse/service-account.mjs';
import { API, rowsOf, startTestWarehouse } from './warehouse-helpers.mjs';

const EVENTS = `\`service-v1.${SHARDED.dataset}.${SHARDED.prefix}*\``;
let t;
let acmeOnly; // an account trusted for the acme dataset only

beforeAll(async () => {
  acmeOnly = createServiceAccount({ clientEmail: 'wildcard-acme@service-v1.iam.gserviceaccount.com' });
  t = await startTestWarehouse({
    extraAccounts: [{ clientEmail: acmeOnly.clientEmail, publicKeyPem: acmeOnly.publicKeyPem, keyId: acmeOnly.keyId, datasets: ['acme'] }],
  });
});

afterAll(async () => {
  await t?.wh.close();
});

async function rows(sql) {
  const r = await t.query(sql, { maxResults: 10_000 });
  if (r.status !== 200) throw new Error(`${r.status} ${r.body?.error?.message}`);
  return { rows: rowsOf(r.body), fields: r.body.schema.fields.map((f) => f.name) };
}

describe('wildcard tables', () => {
  it(`the demo has ${SHARDED.days} daily shards ending yesterday, and their union is the source table over those days`, async () => {
    const names = shardNames(t.wh.today);
    expect(names).toHaveLength(SHARDED.days);
    const yesterday = new Date(Date.parse(`${t.wh.today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');
    expect(names.at(-1)).toBe(`${SHARDED.prefix}${yesterday}`);
    const { rows: r } = await rows(`SELECT
        (SELECT COUNT(*) FROM ${EVENTS}) AS wildcard_rows,
        (SELECT COUNT(DISTINCT _TABLE_SUFFIX) FROM ${EVENTS}) AS suffixes,
        (SELECT MIN(_TABLE_SUFFIX) FROM ${EVENTS}) AS first_suffix,
        (SELECT COUNT(*) FROM \`service-v1.${SHARDED.dataset}.${SHARDED.source}\`
          WHERE DATE(event_ts) >= DATE_SUB(CURRENT_DATE(), INTERVAL ${SHARDED.days} DAY)) AS source_rows,
        (SELECT COUNTIF(FORMAT_DATE('%Y%m%d', DATE(event_ts)) != _TABLE_SUFFIX) FROM ${EVENTS}) AS misplaced`);
    expect(Number(r[0].wildcard_rows)).toBeGreaterThan(0);
    expect(r[0]).toEqual({
      wildcard_rows: r[0].source_rows,
      suffixes: String(SHARDED.days),
      first_suffix: names[0].slice(SHARDED.prefix.length),
      source_rows: r[0].source_rows,
      misplaced: '0',
    });
  });

  it('the dry run lists 50 of the 60 matched shards, as BigQuery may, and bills only the columns the query names', async () => {
    const d = await t.dryRun(`SELECT event_name, COUNT(*) AS n FROM ${EVENTS} GROUP BY event_name`);
    expect(d.status).toBe(200);
    const refs = d.body.statistics.query.referencedTables;
    // "Queries that reference more than 50 tables will not have a complete list" (JobStatistics2).
    expect(refs.length).toBe(50);
    expect(shardNames(t.wh.today)).toEqual(expect.arrayContaining(refs.map((x) => x.tableId)));
    expect(new Set(refs.map((x) => `${x.projectId}.${x.datasetId}`))).toEqual(new Set([`service-v1.${SHARDED.dataset}`]));
    const names = Number(d.body.statistics.query.totalBytesProcessed);
    const star = Number((await t.dryRun(`SELECT * FROM ${EVENTS}`)).body.statistics.query.totalBytesProcessed);
    const count = Number(
      (await t.dryRun(`SELECT COUNT(*) FROM ${EVENTS} WHERE _TABLE_SUFFIX > '2'`)).body.statistics.query.totalBytesProcessed,
    );
    expect(names).toBeGreaterThan(0);
    expect(star).toBeGreaterThan(names);
    // _TABLE_SUFFIX is a pseudo column: filtering on it reads no column bytes.
    expect(count).toBe(0);
  });

  it('_TABLE_SUFFIX filters and groups, and a longer prefix narrows the match', async () => {
    const names = shardNames(t.wh.today);
    const last = String(names.at(-1)).slice(SHARDED.prefix.length);
    const { rows: r } = await rows(`SELECT _TABLE_SUFFIX AS day, COUNT(*) AS n FROM ${EVENTS} WHERE _TABLE_SUFFIX = '${last}' GROUP BY 1`);
    expect(r).toEqual([{ day: last, n: expect.stringMatching(/^[1-9]\d*$/) }]);
    const month = last.slice(0, 6);
    const narrow = `\`service-v1.${SHARDED.dataset}.${SHARDED.prefix}${month}*\``;
    const d = await t.dryRun(`SELECT MIN(_TABLE_SUFFIX) AS lo FROM ${narrow}`);
    expect(d.body.statistics.query.referencedTables.map((x) => x.tableId)).toEqual(names.filter((n) => n.includes(`_${month}`)));
    const { rows: lo } = await rows(`SELECT MIN(_TABLE_SUFFIX) AS lo FROM ${narrow}`);
    // The suffix is what follows the wildcard's own prefix.
    expect(lo[0].lo).toHaveLength(2);
  });

  it('SELECT * leaves the pseudo column out, with EXCEPT, an alias and a qualified star; naming it returns it', async () => {
    const columns = ['event_id', 'event_ts', 'customer_id', 'event_name', 'page'];
    expect((await rows(`SELECT * FROM ${EVENTS} LIMIT 1`)).fields).toEqual(columns);
    expect((await rows(`SELECT * EXCEPT (page) FROM ${EVENTS} AS e WHERE e._TABLE_SUFFIX > '0' LIMIT 1`)).fields).toEqual(
      columns.slice(0, 4),
    );
    expect(
      (
        await rows(
          `SELECT e.*, c.segment FROM ${EVENTS} e JOIN \`service-v1.${SHARDED.dataset}.dim__customers\` c USING (customer_id) LIMIT 1`,
        )
      ).fields,
    ).toEqual([...columns, 'segment']);
    expect((await rows(`SELECT *, _TABLE_SUFFIX AS day FROM ${EVENTS} LIMIT 1`)).fields).toEqual([...columns, 'day']);
  });

  it('a wildcard that matches no table is notFound, as on BigQuery; one in another project is accessDenied', async () => {
    const none = await t.query('SELECT 1 FROM `service-v1.acme.events_*`');
    expect(none.status).toBe(404);
    expect(none.body.error.errors[0].reason).toBe('notFound');
    const other = await t.query('SELECT 1 FROM `another-project.umbrella.events_*`');
    expect(other.status).toBe(403);
    expect(other.body.error.errors[0].reason).toBe('accessDenied');
  });

  it('an account limited to another dataset cannot read the shards through a wildcard', async () => {
    const res = await fetch(`${t.wh.url}${API}/jobs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${signServiceAccountJwt(acmeOnly.json)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ configuration: { dryRun: true, query: { query: `SELECT COUNT(*) FROM ${EVENTS}`, useLegacySql: false } } }),
    });
    expect(res.status).toBe(403);
    expect((await res.json()).error.errors[0].reason).toBe('accessDenied');
  });

  it('tables.list lists the shards and tables.get describes one', async () => {
    const name = shardNames(t.wh.today)[0];
    const list = await t.call('GET', `${API}/datasets/${SHARDED.dataset}/tables`);
    expect(list.status).toBe(200);
    expect(list.body.tables.map((x) => x.tableReference.tableId)).toEqual(expect.arrayContaining(shardNames(t.wh.today)));
    const get = await t.call('GET', `${API}/datasets/${SHARDED.dataset}/tables/${name}`);
    expect(get.status).toBe(200);
    expect(get.body.schema.fields.map((f) => f.name)).toEqual(['event_id', 'event_ts', 'customer_id', 'event_name', 'page']);
    expect(Number(get.body.numRows)).toBeGreaterThan(0);
  });
});
