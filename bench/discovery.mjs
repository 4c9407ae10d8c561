#!/usr/bin/env node
// What an assistant reads to know one table, and what it reads before any tool, over MCP:
//   discovery: describe_table { table } against the three steps the server instructions named before it:
//              run_query of the brand's table_metadata, run_query of INFORMATION_SCHEMA.COLUMNS for the table, then
//              list_memories { table } (today's tools and result forms, so only the path differs);
//   first read: the server instructions (initialize) plus the JSON of tools/list, per kind of key (the tools
//              offered differ: only a key with the memory write permission sees save_memory).
// The service runs as `npm run dev` does, in a temporary state dir (bench/paging.mjs, startDev); the warehouse's
// request journal counts the runs (jobs.query and jobs.insert), the dry runs that check the SQL and the tables.get
// calls of each path.
// `node bench/discovery.mjs`, or `run()` from `npm run bench`.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { d1Execute, sql } from '../scripts/lib/d1.mjs';
import { connect, modelBytes, size, startDev } from './paging.mjs';
import { runIfMain } from './stats.mjs';

const ROOT = new URL('..', import.meta.url).pathname;
const DATASET = 'acme';
const TABLE = 'fact__orders';
/** Instructions plus tools/list, in bytes (as test/mcp-tools-list.test.ts counts them). */
const TARGET_FIRST_READ = 14_000;
/** The secret of the memory-writing org key this bench adds to the instance's local D1. */
const WRITER_SECRET = `wqk_disc${'0'.repeat(40)}`;

const THREE_STEPS = [
  ['run_query table_metadata', 'run_query', { sql: `SELECT table_name, layer, description FROM \`service-v1.${DATASET}.table_metadata\`` }],
  [
    'run_query INFORMATION_SCHEMA.COLUMNS',
    'run_query',
    {
      sql: `SELECT column_name, data_type FROM \`service-v1.${DATASET}.INFORMATION_SCHEMA.COLUMNS\` WHERE table_name = '${TABLE}'`,
    },
  ],
  ['list_memories', 'list_memories', { table: TABLE }],
];

/** The warehouse requests since the journal was cleared, by operation; dry runs (the SQL check) apart from runs. */
async function warehouseOps(warehouse) {
  const res = await fetch(`${warehouse}/__requests?limit=500`);
  const ops = {};
  for (const r of (await res.json()).requests) {
    const dry = r.body?.dryRun === true || r.body?.configuration?.dryRun === true;
    const op = r.op === 'query' || r.op === 'insert' ? (dry ? 'dryRun' : 'run') : r.op;
    ops[op] = (ops[op] ?? 0) + 1;
  }
  return ops;
}

async function clearJournal(warehouse) {
  await fetch(`${warehouse}/__requests`, { method: 'DELETE' });
}

/** Calls each step in order; bytes as the model reads them (per client) and as sent, and the warehouse's count. */
async function path(client, warehouse, steps) {
  await clearJournal(warehouse);
  const calls = [];
  for (const [label, name, args] of steps) {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name} failed: ${result.content?.[0]?.text}`);
    calls.push({ label, ...modelBytes(result), wire: size(result) });
  }
  const ops = await warehouseOps(warehouse);
  const sum = (k) => calls.reduce((a, c) => a + c[k], 0);
  return {
    calls,
    mcpCalls: calls.length,
    warehouseRuns: ops.run ?? 0,
    dryRuns: ops.dryRun ?? 0,
    tablesGet: ops.tablesGet ?? 0,
    text: sum('text'),
    claudeCode: sum('claudeCode'),
    chatgpt: sum('chatgpt'),
    wire: sum('wire'),
  };
}

/** Instructions (from initialize) plus the JSON of tools/list's tools, as one key is offered them. */
async function firstRead(url, key) {
  const client = await connect(url, key);
  try {
    const { tools } = await client.listTools();
    const instructions = Buffer.byteLength(client.getInstructions() ?? '');
    const toolsBytes = size(tools);
    return { tools: tools.length, instructionsBytes: instructions, toolsListBytes: toolsBytes, totalBytes: instructions + toolsBytes };
  } finally {
    await client.close();
  }
}

/** An org_demo key with the memory write permission (the demo keys have none), straight into the local D1. */
async function addWriterKey(dev) {
  const hash = createHash('sha256').update(WRITER_SECRET).digest('hex');
  const row = sql`(${'key_bench_writer'}, ${'discovery bench writer'}, ${WRITER_SECRET.slice(0, 12)}, ${hash}, ${'org_demo'}, ${Date.now()}, 1)`;
  await d1Execute(
    { persistTo: join(dev.stateDir, 'wrangler-state'), cwd: ROOT },
    { command: `INSERT INTO api_keys (id, name, prefix, secret_hash, org_id, created_at, memories_write) VALUES ${row};` },
  );
  return WRITER_SECRET;
}

export async function run() {
  const dev = await startDev();
  try {
    const client = await connect(dev.url, dev.keys.brand);
    let threeSteps;
    let describe;
    try {
      threeSteps = await path(client, dev.warehouse, THREE_STEPS);
      describe = await path(client, dev.warehouse, [['describe_table', 'describe_table', { table: TABLE }]]);
    } finally {
      await client.close();
    }
    const keys = {
      'org key, memory write': await firstRead(dev.url, await addWriterKey(dev)),
      'org key, read-only': await firstRead(dev.url, dev.keys.org),
      'brand key, read-only': await firstRead(dev.url, dev.keys.brand),
    };
    const met = describe.warehouseRuns === 0 && Object.values(keys).every((k) => k.totalBytes <= TARGET_FIRST_READ);
    const line = (label, p) => [
      `discovery ${label}`,
      `${p.mcpCalls} calls, ${p.warehouseRuns} runs (+${p.dryRuns} dry), ${p.tablesGet} tables.get`,
      `model reads: text ${p.text} B, Claude Code ${p.claudeCode} B, ChatGPT ${p.chatgpt} B`,
      `wire ${p.wire} B`,
    ];
    return {
      table: `${DATASET}.${TABLE}`,
      threeSteps,
      describeTable: describe,
      firstRead: keys,
      target: { describeTableRuns: 0, firstReadBytes: TARGET_FIRST_READ },
      targetMet: met,
      rows: [
        line(`three steps (${DATASET}.${TABLE})`, threeSteps),
        ...threeSteps.calls.map((c) => [`  ${c.label}`, `text ${c.text} B`, `Claude Code ${c.claudeCode} B`, `wire ${c.wire} B`]),
        line(`describe_table (${DATASET}.${TABLE})`, describe),
        ...Object.entries(keys).map(([kind, k]) => [
          `first read: ${kind}`,
          `${k.tools} tools`,
          `instructions ${k.instructionsBytes} B + tools/list ${k.toolsListBytes} B = ${k.totalBytes} B`,
          `target at most ${TARGET_FIRST_READ} B`,
        ]),
      ],
    };
  } finally {
    await dev.stop();
  }
}

await runIfMain(import.meta.url, run);
