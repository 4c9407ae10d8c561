#!/usr/bin/env node
// The analyst figures of issue 39 over a real MCP client against the demo data: the first read (instructions +
// tools/list) per demo key, and the calls and bytes of a typical question ("Globex's net revenue last full month, and
// where does that number come from?") as an org_demo key asks it: list_brands, list_reports, list_report_queries,
// list_memories, describe_table (list and one table), run_query; then the Umbrella table list of org_other's key and
// a search with no matching term. Bytes are what each client's model reads (bench/paging.mjs modelBytes: claude.ai
// the text, Claude Code the structured content when there is one, ChatGPT both). Figures: docs/benchmarks.md,
// "Analyst figures".
//
//   node bench/analyst.mjs                      starts `npm run dev` in a temporary state dir (up to --ready-timeout
//                                               seconds, default 600: a machine busy with tests starts it slowly)
//   node bench/analyst.mjs --url http://127.0.0.1:8787 [--credentials .dev/credentials.json]
//                                               measures an `npm run dev` already running, starting nothing
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect, modelBytes, size, startDev } from './paging.mjs';
import { runIfMain } from './stats.mjs';

async function firstRead(url, key) {
  const client = await connect(url, key);
  try {
    const { tools } = await client.listTools();
    const instructions = Buffer.byteLength(client.getInstructions() ?? '');
    return { tools: tools.length, bytes: instructions + size(tools) };
  } finally {
    await client.close();
  }
}

async function steps(url, key, list) {
  const client = await connect(url, key);
  const calls = [];
  try {
    for (const [name, args] of list) {
      const result = await client.callTool({ name, arguments: args });
      calls.push({
        name,
        isError: Boolean(result.isError),
        ...modelBytes(result),
        wire: size(result),
        head: result.content?.[0]?.text?.slice(0, 160),
      });
    }
  } finally {
    await client.close();
  }
  const sum = (k) => calls.reduce((a, c) => a + c[k], 0);
  return { calls, count: calls.length, text: sum('text'), claudeCode: sum('claudeCode'), chatgpt: sum('chatgpt'), wire: sum('wire') };
}

/** Starting npm run dev for the bench may take this long by default (a loaded machine took over 120 s). */
const READY_TIMEOUT_S = 600;
const ROOT = new URL('..', import.meta.url).pathname;

/**
 * The service to measure: the running `npm run dev` at `url` (keys from its credentials file), or a fresh one
 * started for the bench and stopped after it.
 * @param {{ url?: string, credentials?: string, readyTimeoutS?: number }} opts
 */
async function service({ url, credentials, readyTimeoutS = READY_TIMEOUT_S }) {
  if (url) {
    const creds = JSON.parse(await readFile(credentials ?? join(ROOT, '.dev', 'credentials.json'), 'utf8'));
    return { url, keys: creds.keys, started: null, stop: async () => {} };
  }
  const t0 = performance.now();
  const dev = await startDev({ readyTimeoutMs: readyTimeoutS * 1000 });
  return { ...dev, started: Math.round(performance.now() - t0) };
}

/** @param {{ url?: string, credentials?: string, readyTimeoutS?: number }} [opts] */
export async function run(opts = {}) {
  const dev = await service(opts);
  try {
    const first = {
      org: await firstRead(dev.url, dev.keys.org),
      brand: await firstRead(dev.url, dev.keys.brand),
      other: await firstRead(dev.url, dev.keys.other),
    };
    const typical = await steps(dev.url, dev.keys.org, [
      ['list_brands', {}],
      ['list_reports', { brandId: 'brand_globex' }],
      ['list_report_queries', { reportId: 'rpt_business_overview', brandId: 'brand_globex' }],
      ['describe_table', { brandId: 'brand_globex' }],
      ['describe_table', { brandId: 'brand_globex', table: 'report__monthly_kpis' }],
      ['list_memories', { brandId: 'brand_globex' }],
      ['run_query', { queryId: 'sq_globex_monthly_kpis', brandId: 'brand_globex' }],
    ]);
    const other = await steps(dev.url, dev.keys.other, [
      ['describe_table', {}],
      ['describe_table', { brandId: 'brand_umbrella' }],
      ['run_query', { sql: 'SELECT 1 AS one' }],
      ['list_memories', {}],
    ]);
    const search = await steps(dev.url, dev.keys.org, [
      ['search', { query: 'Umbrella Health' }],
      ['search', { query: 'Globex Coffee' }],
      ['search', { query: 'net revenue' }],
    ]);
    const line = (label, p) => [
      label,
      `${p.count} calls`,
      `text ${p.text} B, Claude Code ${p.claudeCode} B, ChatGPT ${p.chatgpt} B, wire ${p.wire} B`,
    ];
    return {
      devStartMs: dev.started,
      firstRead: first,
      typical,
      other,
      search,
      rows: [
        ...Object.entries(first).map(([k, f]) => [`first read (${k} key)`, `${f.tools} tools`, `${f.bytes} B`]),
        line('typical question (org_demo)', typical),
        ...typical.calls.map((c) => [
          `  ${c.name}`,
          c.isError ? 'ERROR' : 'ok',
          `text ${c.text} B, Claude Code ${c.claudeCode} B, ChatGPT ${c.chatgpt} B`,
        ]),
        line('org_other key', other),
        ...other.calls.map((c) => [`  ${c.name}`, c.isError ? 'ERROR' : 'ok', `text ${c.text} B, ChatGPT ${c.chatgpt} B`]),
        ...search.calls.map((c) => [`  search`, `text ${c.text} B`, c.head]),
      ],
    };
  } finally {
    await dev.stop();
  }
}

await runIfMain(import.meta.url, () => {
  const { values } = parseArgs({
    options: { url: { type: 'string' }, credentials: { type: 'string' }, 'ready-timeout': { type: 'string' } },
    strict: false,
  });
  const timeout = values['ready-timeout'];
  return run({
    url: typeof values.url === 'string' ? values.url : undefined,
    credentials: typeof values.credentials === 'string' ? values.credentials : undefined,
    readyTimeoutS: typeof timeout === 'string' ? Number(timeout) : undefined,
  });
});
