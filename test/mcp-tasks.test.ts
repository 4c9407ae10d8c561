import { env, SELF } from 'cloudflare:test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readJob } from '../src/features/query-jobs/job-store';
import { sanitizeLabels } from '../src/warehouse/labels';
import { connectMcp, MCP_URL } from './mcp-client';
import { addBrandKey, seedDemo, usedBytes } from './seed';
import { warehouseFaults } from './warehouse-faults';

/**
 * MCP tasks in both eras (docs/mcp.md, "Long queries (tasks)"), on the wire: the SDK's client speaks neither era's
 * tasks, so these are raw JSON-RPC POSTs through the Worker. Queries are made slower than QUERY_TIMEOUT_MS with the
 * local warehouse's slowJob fault, matched to a marker in this test's own SQL; every deadline is read from env.
 */

const ORDERS = '`service-v1.acme.fact__orders`';
const TIMEOUT = Number(env.QUERY_TIMEOUT_MS);
const faults = warehouseFaults();
const keys = { a: '', b: '' };
const keyIds = { a: '', b: '' };

beforeAll(async () => {
  await seedDemo();
  for (const k of ['a', 'b'] as const) {
    const key = await addBrandKey(`tasks ${k}`);
    keys[k] = key.secret;
    keyIds[k] = key.id;
  }
});

/** A marker of its own whose jobs run `ms`: put it in the test's SQL. */
async function slowJob(ms: number): Promise<string> {
  const marker = `task${crypto.randomUUID().slice(0, 8)}`;
  await faults.slowJob(marker, ms);
  return marker;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let nextId = 1;

const Rpc = z.object({
  jsonrpc: z.literal('2.0'),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
});

const ENVELOPE = (tasks: boolean) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-tasks-client', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {},
});

/** One JSON-RPC request through the Worker, with `key` as bearer and the era's `headers`. */
async function rpc(key: string, headers: Record<string, string>, method: string, params: Record<string, unknown>) {
  const res = await SELF.fetch(MCP_URL, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
  });
  return Rpc.parse(await res.json());
}

/** One 2026-07-28 request: the `_meta` envelope (declaring the Tasks extension unless told not to) and the standard headers. */
function modern(key: string, method: string, params: Record<string, unknown>, opts: { tasks?: boolean } = {}) {
  const name = typeof params.name === 'string' ? params.name : typeof params.taskId === 'string' ? params.taskId : undefined;
  const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name === undefined ? {} : { 'mcp-name': name }) };
  return rpc(key, headers, method, { ...params, _meta: ENVELOPE(opts.tasks ?? true) });
}

/** One 2025-11-25 request (stateless: no session; the version header on every request after initialize). */
function legacy(key: string, method: string, params: Record<string, unknown>) {
  return rpc(key, method === 'initialize' ? {} : { 'mcp-protocol-version': '2025-11-25' }, method, params);
}

const ok = (r: z.infer<typeof Rpc>) => {
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  return r.result!;
};

const ToolResult = z.object({ isError: z.boolean().optional(), content: z.array(z.object({ type: z.string(), text: z.string() })) });
const ResultData = z
  .object({ rows: z.array(z.array(z.unknown())), totalRows: z.number(), nextCursor: z.string().nullable(), usage: z.unknown() })
  .passthrough();
const ModernTask = z.object({
  taskId: z.string(),
  status: z.enum(['working', 'completed', 'failed', 'cancelled']),
  statusMessage: z.string(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttlMs: z.number().nullable(),
  pollIntervalMs: z.number().optional(),
  _meta: z.object({ 'warehouse/progress': z.object({ elapsedMs: z.number(), bytesProcessed: z.number().nullable() }) }).passthrough(),
});
const LegacyTask = ModernTask.omit({ ttlMs: true, pollIntervalMs: true, _meta: true }).extend({
  ttl: z.number().nullable(),
  pollInterval: z.number().optional(),
});

const sqlOf = (marker: string, where = 'order_date = DATE_SUB(CURRENT_DATE(), INTERVAL 3 DAY)') =>
  `SELECT order_id FROM ${ORDERS} WHERE ${where} /* ${marker} */`;

/** Every row of a finished result: its first page, then the cursor to the end (no task for a page read). */
async function readAll(key: string, first: z.infer<typeof ResultData>, call: typeof modern | typeof legacy) {
  const rows = [...first.rows];
  let cursor = first.nextCursor;
  for (let pages = 0; cursor !== null; pages++) {
    expect(pages).toBeLessThan(100);
    const page = ResultData.parse(
      JSON.parse(ToolResult.parse(ok(await call(key, 'tools/call', { name: 'run_query', arguments: { cursor } }))).content[0]!.text),
    );
    rows.push(...page.rows);
    cursor = page.nextCursor;
  }
  expect(rows).toHaveLength(first.totalRows);
  expect(new Set(rows.map((r) => r[0])).size).toBe(first.totalRows);
}

/** Polls a cancelled job until BigQuery stopped it and its bill is settled; its row. */
async function settled(key: string, taskId: string, call: typeof modern | typeof legacy) {
  for (let i = 0; i < 120; i++) {
    const row = await readJob(env, taskId);
    if (row && row.settled_at !== null) return row;
    await call(key, 'tasks/get', { taskId });
    await sleep(250);
  }
  throw new Error(`job ${taskId} was never settled`);
}

describe('2026-07-28: the Tasks extension (SEP-2663)', () => {
  it('server/discover declares the extension; tools/list carries no 2025 execution flags', async () => {
    const discover = ok(await modern(keys.a, 'server/discover', {}));
    expect(discover.capabilities).toMatchObject({ extensions: { 'io.modelcontextprotocol/tasks': {} } });
    expect(discover.capabilities).not.toHaveProperty('tasks');
    const list = z.object({ tools: z.array(z.record(z.string(), z.unknown())) }).parse(ok(await modern(keys.a, 'tools/list', {})));
    expect(list.tools.some((t) => 'execution' in t)).toBe(false);
  });

  it('a query past QUERY_TIMEOUT_MS answers a task; tasks/get reads it to the last row; another key gets not-found', async () => {
    const marker = await slowJob(TIMEOUT + 500);
    const created = ok(await modern(keys.a, 'tools/call', { name: 'run_query', arguments: { sql: sqlOf(marker) } }));
    expect(created.resultType).toBe('task');
    const task = ModernTask.parse(created);
    expect(task).toMatchObject({ status: 'working', ttlMs: 6 * 3_600_000 });
    expect(task.pollIntervalMs).toBeGreaterThan(0);

    // Another key: the same answer as for a task that never existed, for every method; the id is not echoed as found.
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const refused = await modern(keys.b, method, { taskId: task.taskId });
      expect(refused.error).toMatchObject({ code: -32602, data: { code: 'JOB_NOT_FOUND', requestId: expect.stringMatching(/^req_/) } });
    }
    // tasks/result and tasks/list are 2025 vocabulary: not methods of this era.
    expect((await modern(keys.a, 'tasks/result', { taskId: task.taskId })).error?.code).toBe(-32601);
    // A request that does not declare the extension: -32021, naming it (SEP-2663).
    expect((await modern(keys.a, 'tasks/get', { taskId: task.taskId }, { tasks: false })).error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    });

    let polled = ModernTask.passthrough().parse(ok(await modern(keys.a, 'tasks/get', { taskId: task.taskId })));
    for (let i = 0; polled.status === 'working' && i < 200; i++) {
      expect(polled.statusMessage).toMatch(/^Running for \d+ s/);
      await sleep(500); // shorter than pollIntervalMs: the test, not a client, decides how long it waits
      polled = ModernTask.passthrough().parse(ok(await modern(keys.a, 'tasks/get', { taskId: task.taskId })));
    }
    expect(polled.status).toBe('completed');
    expect(polled._meta['warehouse/progress'].elapsedMs).toBeGreaterThan(TIMEOUT);
    const final = ToolResult.parse(polled.result);
    expect(final.isError ?? false).toBe(false);
    await readAll(keys.a, ResultData.parse(JSON.parse(final.content[0]!.text)), modern);
    const row = await readJob(env, task.taskId);
    expect(row).toMatchObject({ status: 'done', transport: 'mcp' });
    expect(await usedBytes(keyIds.a)).toBe(row!.bytes_billed);
  }, 120_000);

  it('tasks/cancel acknowledges, the task reads cancelled, BigQuery stops the job and its bill is settled', async () => {
    const before = await usedBytes(keyIds.b);
    const marker = await slowJob(600_000);
    const task = ModernTask.parse(ok(await modern(keys.b, 'tools/call', { name: 'run_query', arguments: { sql: sqlOf(marker, 'TRUE') } })));
    expect((await modern(keys.a, 'tasks/get', { taskId: task.taskId })).error?.code).toBe(-32602);
    expect(ok(await modern(keys.b, 'tasks/cancel', { taskId: task.taskId }))).not.toHaveProperty('status');
    const after = ModernTask.passthrough().parse(ok(await modern(keys.b, 'tasks/get', { taskId: task.taskId })));
    expect(after.status).toBe('cancelled');
    expect(after).not.toHaveProperty('result');
    const row = await settled(keys.b, task.taskId, modern);
    expect(row.status).toBe('cancelled');
    expect(await usedBytes(keyIds.b)).toBe(before + row.bytes_billed!);
    const log = await env.DB.prepare('SELECT outcome FROM query_log WHERE async_job_id = ?').bind(task.taskId).first();
    expect(log).toEqual({ outcome: 'QUERY_CANCELLED' });
  }, 60_000);

  it('a quick query answers its result as always; a client without the extension never gets a task', async () => {
    const quick = ok(
      await modern(keys.a, 'tools/call', { name: 'run_query', arguments: { sql: `SELECT 1 AS one FROM ${ORDERS} LIMIT 1` } }),
    );
    expect(quick.resultType).toBe('complete');
    expect(ResultData.parse(JSON.parse(ToolResult.parse(quick).content[0]!.text)).rows).toEqual([[1]]);
    const marker = await slowJob(Number(env.LONG_QUERY_WAIT_MS) + 60_000);
    const plain = ok(
      await modern(keys.a, 'tools/call', { name: 'run_query', arguments: { sql: sqlOf(marker, 'TRUE') } }, { tasks: false }),
    );
    expect(plain.resultType).toBe('complete');
    const pending = z.object({ status: z.literal('running'), jobId: z.string() }).passthrough();
    const { jobId } = pending.parse(JSON.parse(ToolResult.parse(plain).content[0]!.text));
    // The pending cursor's job is the same durable job a task would be; clean it up.
    ok(await modern(keys.a, 'tasks/cancel', { taskId: jobId }));
    await settled(keys.a, jobId, modern);
  }, 120_000);
});

describe('2026-07-28: show_report as a task', () => {
  it('a report whose section outlives the wait answers one task over its sections; tasks/get brings every section', async () => {
    const call = (name: string, args: Record<string, unknown>) => modern(keys.a, 'tools/call', { name, arguments: args });
    const listed = ok(await call('list_report_queries', { reportId: 'rpt_business_overview' }));
    const sections = z
      .object({ queries: z.array(z.object({ id: z.string() })) })
      .parse(z.object({ structuredContent: z.unknown() }).parse(listed).structuredContent).queries;
    expect(sections.length).toBeGreaterThan(2);
    // Only this key's run of the first section is slow (matched by the job labels every run carries).
    const label = sanitizeLabels({ principal: `key_${keyIds.a}`, stored_query: sections[0]!.id });
    await faults.arm({ kind: 'slowJob', ms: TIMEOUT + 500, match: { op: 'insert', label, dryRun: false } });

    const created = ok(await call('show_report', { reportId: 'rpt_business_overview' }));
    expect(created.resultType).toBe('task');
    const task = ModernTask.parse(created);
    expect(task.taskId).toMatch(/^rt_/);
    expect((await modern(keys.b, 'tasks/get', { taskId: task.taskId })).error).toMatchObject({ code: -32602 });

    let polled = ModernTask.passthrough().parse(ok(await modern(keys.a, 'tasks/get', { taskId: task.taskId })));
    for (let i = 0; polled.status === 'working' && i < 200; i++) {
      await sleep(500); // shorter than pollIntervalMs: the test, not a client, decides how long it waits
      polled = ModernTask.passthrough().parse(ok(await modern(keys.a, 'tasks/get', { taskId: task.taskId })));
    }
    expect(polled.status).toBe('completed');
    expect(polled._meta['warehouse/progress'].elapsedMs).toBeGreaterThan(TIMEOUT);
    const shown = z
      .object({ sections: z.array(z.object({ id: z.string(), rows: z.array(z.unknown()).optional(), error: z.unknown().optional() })) })
      .parse(JSON.parse(ToolResult.parse(polled.result).content[0]!.text));
    expect(shown.sections.map((s) => s.id)).toEqual(sections.map((s) => s.id));
    expect(shown.sections.filter((s) => s.error !== undefined)).toEqual([]);
    expect(shown.sections.every((s) => Array.isArray(s.rows))).toBe(true);
  }, 120_000);
});

describe('2026-07-28: cancelling a report task', () => {
  it('tasks/cancel stops its running section; the others keep their rows; every section is billed once', async () => {
    const call = (name: string, args: Record<string, unknown>) => modern(keys.b, 'tools/call', { name, arguments: args });
    const listed = ok(await call('list_report_queries', { reportId: 'rpt_business_overview' }));
    const first = z.object({ structuredContent: z.object({ queries: z.array(z.object({ id: z.string() })) }) }).parse(listed)
      .structuredContent.queries[0]!.id;
    const label = sanitizeLabels({ principal: `key_${keyIds.b}`, stored_query: first });
    await faults.arm({ kind: 'slowJob', ms: 600_000, match: { op: 'insert', label, dryRun: false } });
    const since = Date.now();
    const before = await usedBytes(keyIds.b);

    const task = ModernTask.parse(ok(await call('show_report', { reportId: 'rpt_business_overview' })));
    expect(ok(await modern(keys.b, 'tasks/cancel', { taskId: task.taskId }))).toEqual(
      expect.not.objectContaining({ status: expect.anything() }),
    );
    let polled = ModernTask.passthrough().parse(ok(await modern(keys.b, 'tasks/get', { taskId: task.taskId })));
    for (let i = 0; polled.status === 'working' && i < 120; i++) {
      await sleep(250);
      polled = ModernTask.passthrough().parse(ok(await modern(keys.b, 'tasks/get', { taskId: task.taskId })));
    }
    const shown = z
      .object({
        sections: z.array(
          z.object({ id: z.string(), rows: z.array(z.unknown()).optional(), error: z.object({ code: z.string() }).optional() }),
        ),
      })
      .parse(JSON.parse(ToolResult.parse(polled.result).content[0]!.text));
    expect(shown.sections.find((s) => s.id === first)?.error?.code).toBe('QUERY_CANCELLED');
    expect(shown.sections.filter((s) => s.id !== first).every((s) => Array.isArray(s.rows))).toBe(true);
    const jobs = await env.DB.prepare('SELECT bytes_billed, settled_at FROM query_jobs WHERE principal_id = ? AND created_at >= ?')
      .bind(keyIds.b, since)
      .all<{ bytes_billed: number; settled_at: number | null }>();
    expect(jobs.results).toHaveLength(shown.sections.length);
    expect(jobs.results.every((j) => j.settled_at !== null)).toBe(true);
    expect(await usedBytes(keyIds.b)).toBe(before + jobs.results.reduce((sum, j) => sum + j.bytes_billed, 0));
  }, 60_000);
});

describe('2025-11-25: the experimental tasks (SEP-1686)', () => {
  it('initialize declares capabilities.tasks; run_query alone carries execution.taskSupport', async () => {
    const init = ok(
      await legacy(keys.a, 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'raw-tasks-client', version: '1.0.0' },
      }),
    );
    expect(init.capabilities).toMatchObject({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } });
    const list = z
      .object({ tools: z.array(z.object({ name: z.string(), execution: z.unknown().optional() })) })
      .parse(ok(await legacy(keys.a, 'tools/list', {})));
    expect(list.tools.filter((t) => t.execution !== undefined)).toEqual([{ name: 'run_query', execution: { taskSupport: 'optional' } }]);
    const refused = await legacy(keys.a, 'tools/call', { name: 'list_brands', arguments: {}, task: { ttl: 60_000 } });
    expect(refused.error?.code).toBe(-32601);
  });

  it('a task-augmented call answers { task } at once; tasks/result blocks to the rows; list, cancel, other keys', async () => {
    const marker = await slowJob(TIMEOUT + 500);
    const doomed = await slowJob(600_000);
    const call = (m: string, where?: string) =>
      legacy(keys.a, 'tools/call', { name: 'run_query', arguments: { sql: sqlOf(m, where) }, task: { ttl: 60_000 } });
    const created = z.object({ task: LegacyTask }).parse(ok(await call(marker)));
    expect(created.task).toMatchObject({ status: 'working', ttl: 6 * 3_600_000 });
    const other = z.object({ task: LegacyTask }).parse(ok(await call(doomed, 'TRUE'))).task;

    const listed = z.object({ tasks: z.array(LegacyTask) }).parse(ok(await legacy(keys.a, 'tasks/list', {})));
    expect(listed.tasks.map((t) => t.taskId)).toEqual(expect.arrayContaining([created.task.taskId, other.taskId]));
    const othersList = z.object({ tasks: z.array(LegacyTask) }).parse(ok(await legacy(keys.b, 'tasks/list', {}))).tasks;
    expect(othersList.map((t) => t.taskId)).not.toContain(created.task.taskId);
    expect(othersList.map((t) => t.taskId)).not.toContain(other.taskId);
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      expect((await legacy(keys.b, method, { taskId: created.task.taskId })).error).toMatchObject({ code: -32602 });
    }

    const cancelled = LegacyTask.parse(ok(await legacy(keys.a, 'tasks/cancel', { taskId: other.taskId })));
    expect(cancelled.status).toBe('cancelled');
    expect((await legacy(keys.a, 'tasks/cancel', { taskId: other.taskId })).error?.code).toBe(-32602);

    // tasks/result blocks until the end (past QUERY_TIMEOUT_MS), then answers what the call would have answered.
    const result = ok(await legacy(keys.a, 'tasks/result', { taskId: created.task.taskId }));
    expect(result._meta).toMatchObject({ 'io.modelcontextprotocol/related-task': { taskId: created.task.taskId } });
    const first = ResultData.parse(JSON.parse(ToolResult.parse(result).content[0]!.text));
    await readAll(keys.a, first, legacy);
    const done = LegacyTask.parse(ok(await legacy(keys.a, 'tasks/get', { taskId: created.task.taskId })));
    expect(done.status).toBe('completed');
    expect(new Date(done.lastUpdatedAt).getTime() - new Date(done.createdAt).getTime()).toBeGreaterThan(TIMEOUT);

    const stopped = await settled(keys.a, other.taskId, legacy);
    const finished = await readJob(env, created.task.taskId);
    expect(await usedBytes(keyIds.a)).toBeGreaterThanOrEqual(finished!.bytes_billed! + stopped.bytes_billed!);
    const cancelledResult = ToolResult.parse(ok(await legacy(keys.a, 'tasks/result', { taskId: other.taskId })));
    expect(cancelledResult.isError).toBe(true);
    expect(cancelledResult.content[0]!.text).toContain('QUERY_CANCELLED');
  }, 120_000);
});

describe('2025-era client without tasks: the pending cursor', () => {
  let client: Awaited<ReturnType<typeof connectMcp>>;
  beforeAll(async () => {
    client = await connectMcp(keys.b, 'legacy');
  });
  afterAll(async () => {
    await client.close();
  });

  it('a plain run_query past LONG_QUERY_WAIT_MS answers pending; its cursor polls to the rows', async () => {
    const marker = await slowJob(Number(env.LONG_QUERY_WAIT_MS) + 1_000);
    const text = async (args: Record<string, unknown>) =>
      JSON.parse(ToolResult.parse(await client.callTool({ name: 'run_query', arguments: args })).content[0]!.text) as Record<
        string,
        unknown
      >;
    const pending = z.object({ status: z.literal('running'), nextCursor: z.string(), pollAfterMs: z.number() }).passthrough();
    const first = pending.parse(await text({ sql: sqlOf(marker) }));
    let data = await text({ cursor: first.nextCursor });
    for (let i = 0; 'status' in data && i < 100; i++) {
      await sleep(pending.parse(data).pollAfterMs);
      data = await text({ cursor: first.nextCursor });
    }
    await readAll(keys.b, ResultData.parse(data), legacy);
  }, 120_000);
});
