import { env, SELF } from 'cloudflare:test';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defaultLimits, generateApiKey } from '../src/auth/api-keys';
import type { PrincipalLimits } from '../src/auth/principal';
import { peekUsage, type UsageSnapshot } from '../src/usage/usage';
import { connectMcp, errorOf } from './mcp-client';
import { seedDemo, WAIT_UNTIL_WORK } from './seed';

// The same key over REST and MCP draws on one rolling 24-hour budget, and the bytes counted are the bytes billed.

const SQL = 'SELECT channel, COUNT(*) AS orders FROM `service-v1.acme.fact__orders` GROUP BY channel ORDER BY channel';
let runText = 0;
/** SQL's text made new for each billed run: a repeat is a query-cache hit, which bills 0 bytes (as on BigQuery). */
const freshSql = () => `${SQL} -- run ${++runText}`;
const Stats = z.object({ stats: z.object({ dryRun: z.boolean(), totalBytesBilled: z.number(), totalBytesProcessed: z.number() }) });

/** A successful run_query tool result's data: its one text block, compact JSON with the stats and the budget left. */
const McpRunData = Stats.extend({
  usage: z.object({ runsRemaining: z.number(), runsLimit: z.number(), maxRunningJobs: z.number(), jobTimeoutMs: z.number() }),
});
const mcpRun = (raw: unknown) => {
  const result = z
    .object({ isError: z.literal(false).optional(), content: z.tuple([z.object({ type: z.literal('text'), text: z.string() })]) })
    .parse(raw);
  return McpRunData.parse(JSON.parse(result.content[0].text));
};
const clients: Client[] = [];

beforeAll(async () => {
  await seedDemo();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

/** A fresh brand key (so a fresh usage window) with the given limits, and an MCP client connected with it. */
async function limitedKey(limits: { dailyQueries?: number; dailyBytes?: number; maxRunningJobs?: number; jobTimeoutMs?: number }) {
  const key = await generateApiKey();
  await env.DB.prepare(
    `INSERT INTO api_keys (id, name, prefix, secret_hash, brand_id, daily_query_limit, daily_bytes_limit, max_running_jobs, job_timeout_ms,
       created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
  )
    .bind(
      key.id,
      'usage transports',
      key.prefix,
      key.secretHash,
      'brand_acme',
      limits.dailyQueries ?? null,
      limits.dailyBytes ?? null,
      limits.maxRunningJobs ?? null,
      limits.jobTimeoutMs ?? null,
    )
    .run();
  const mcp = await connectMcp(key.secret);
  clients.push(mcp);
  const effective: PrincipalLimits = { ...defaultLimits(env), ...limits };
  return {
    id: key.id,
    limits: effective,
    rest: (body: Record<string, unknown>) => postQuery(key.secret, body),
    mcp: (args: Record<string, unknown>) => mcp.callTool({ name: 'run_query', arguments: args }),
    /** The window once the settles the Worker runs in waitUntil have landed (polls until `done`, at most 10 s). */
    settledUsage: (done: (s: UsageSnapshot) => boolean) =>
      vi.waitFor(async () => {
        const snap = await peekUsage(env, `key:${key.id}`, effective, Date.now());
        if (!done(snap)) throw new Error(`usage not settled yet: ${JSON.stringify(snap)}`);
        return snap;
      }, WAIT_UNTIL_WORK),
  };
}

/** POST /v1/data/query through the Worker's own fetch, with `secret` as the bearer key. */
async function postQuery(secret: string, body: Record<string, unknown>) {
  const res = await SELF.fetch('http://api.test/v1/data/query', {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

describe('the long-query limits, on both transports', () => {
  it("a key's running-jobs limit and longest duration come back as Jobs-Limit / Job-Timeout and in MCP usage", async () => {
    const k = await limitedKey({ maxRunningJobs: 3, jobTimeoutMs: 90_000 });
    const rest = await k.rest({ sql: freshSql() });
    expect(rest.status).toBe(200);
    expect([rest.headers.get('Jobs-Limit'), rest.headers.get('Job-Timeout')]).toEqual(['3', '90']);
    expect(mcpRun(await k.mcp({ sql: freshSql() })).usage).toMatchObject({ maxRunningJobs: 3, jobTimeoutMs: 90_000 });
  });
});

describe('one budget across REST and MCP', () => {
  it('runs over either transport count against the same limit; the run past it is refused on both', async () => {
    const k = await limitedKey({ dailyQueries: 4 });
    const billed: number[] = [];

    const r1 = await k.rest({ sql: freshSql() });
    expect(r1.status).toBe(200);
    expect([r1.headers.get('RateLimit-Limit'), r1.headers.get('RateLimit-Remaining')]).toEqual(['4', '3']);
    billed.push(Stats.parse(r1.body).stats.totalBytesBilled);

    const m2 = mcpRun(await k.mcp({ sql: freshSql() }));
    billed.push(m2.stats.totalBytesBilled);
    // MCP states the budget in the body: the same numbers REST sends as headers.
    expect(m2.usage).toMatchObject({ runsLimit: 4, runsRemaining: 2 });

    // A dry run over REST is not counted: still 2 left after the MCP run.
    const dry = await k.rest({ sql: SQL, dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.headers.get('RateLimit-Remaining')).toBe('2');

    billed.push(mcpRun(await k.mcp({ sql: freshSql() })).stats.totalBytesBilled);
    const r4 = await k.rest({ sql: freshSql() });
    expect(r4.status).toBe(200);
    expect(r4.headers.get('RateLimit-Remaining')).toBe('0');
    billed.push(Stats.parse(r4.body).stats.totalBytesBilled);

    const overMcp = errorOf(await k.mcp({ sql: SQL }));
    expect(overMcp.code).toBe('USAGE_LIMIT_EXCEEDED');
    expect(overMcp.details).toMatchObject({ limit: 'runs', limitValue: 4, used: 4 });

    const overRest = await k.rest({ sql: SQL });
    expect(overRest.status).toBe(429);
    expect(overRest.body).toMatchObject({ error: { code: 'USAGE_LIMIT_EXCEEDED', details: { limit: 'runs', limitValue: 4, used: 4 } } });
    const retryAfter = Number(overRest.headers.get('Retry-After'));
    // The oldest of the four runs was made seconds ago: the next run is a day (+ at most the bucket minute) away.
    expect(retryAfter).toBeGreaterThan(24 * 3600 - 60);
    expect(retryAfter).toBeLessThanOrEqual(24 * 3600 + 60);
    expect(overRest.headers.get('RateLimit-Remaining')).toBe('0');
    expect(overRest.headers.get('RateLimit-Reset')).toBe(String(retryAfter));
    expect((await k.rest({ sql: SQL, dryRun: true })).status).toBe(429);

    // Four runs counted, and the bytes counted are exactly the bytes the four runs billed.
    const total = billed.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(0);
    const usage = await k.settledUsage((s) => s.bytes.used >= total);
    expect(usage.runs).toEqual({ used: 4, limit: 4, remaining: 0 });
    expect(usage.bytes.used).toBe(total);
  });

  it('bytes billed over REST exhaust the byte budget for MCP too', async () => {
    const k = await limitedKey({ dailyBytes: 1 });
    // Its own text: a repeat of SQL would be a query-cache hit billing 0 bytes.
    const first = await k.rest({ sql: `${SQL} /* ${crypto.randomUUID()} */` });
    expect(first.status).toBe(200);
    const billed = Stats.parse(first.body).stats.totalBytesBilled;
    expect(billed).toBeGreaterThan(0);
    // Settled: the run's reservation (its dry-run estimate) is visible before the settlement replaces it (waitUntil).
    expect((await k.settledUsage((s) => s.bytes.used === billed)).bytes.used).toBe(billed);

    const overMcp = errorOf(await k.mcp({ sql: SQL }));
    expect(overMcp.code).toBe('USAGE_LIMIT_EXCEEDED');
    expect(overMcp.details).toMatchObject({ limit: 'bytes', limitValue: 1, used: billed });
    const overRest = await k.rest({ sql: SQL });
    expect(overRest.status).toBe(429);
    expect(overRest.headers.get('RateLimit-Remaining')).toBe('0');
  });
});
