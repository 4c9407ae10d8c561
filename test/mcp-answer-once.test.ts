// Every answer once (issue 39): clients differ in what of a tool result they give the model (claude.ai the text,
// Claude Code structuredContent when present, ChatGPT both; docs/mcp.md "Results"), so no tool may send the same
// data twice. A text-only result is one text block and no structuredContent; a structured result's text is a
// compact rendering (a line per item), never its JSON copy, and smaller than it. Every tool is called here through a
// real MCP client with the org key, so a new tool that repeats itself fails this file.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MCP_TOOLS as TOOLS } from '../src/composition';
import { isJsonCopy, mcpClientsPerKey, texts } from './mcp-client';
import { postJson, TEST_KEYS } from './seed';

const clients = mcpClientsPerKey(TEST_KEYS);

type Args = Record<string, unknown>;

/** A report the org key filed, for get_data_issue to read. */
async function filedReport(): Promise<Args> {
  const res = await postJson('/v1/data/feedback', 'org', { summary: 'answer-once report', brandId: 'brand_acme' });
  expect(res.status).toBe(200);
  return { feedbackRef: z.object({ feedbackRef: z.string() }).parse(res.body).feedbackRef };
}

/** One typical call per tool (save_memory's are in test/mcp-memories.test.ts: the demo keys cannot write). */
const CALLS: Record<string, Args | (() => Promise<Args>) | null> = {
  list_brands: {},
  describe_table: { brandId: 'brand_acme', table: 'fact__orders' },
  list_reports: {},
  get_report: { reportId: 'rpt_business_overview', brandId: 'brand_acme' },
  list_report_queries: { reportId: 'rpt_business_overview', brandId: 'brand_acme' },
  list_saved_queries: {},
  run_query: { sql: 'SELECT 1 AS one', brandId: 'brand_acme' },
  report_data_issue: { summary: 'answer-once check', brandId: 'brand_acme' },
  get_data_issue: filedReport,
  search: { query: 'revenue' },
  fetch: { id: 'report:rpt_business_overview' },
  list_memories: {},
  save_memory: null,
  show_report: { reportId: 'rpt_business_overview', brandId: 'brand_acme' },
};

const bytes = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v)).length;

describe('every answer once', () => {
  it('covers every tool', () => {
    expect(Object.keys(CALLS).sort()).toEqual(TOOLS.map((t) => t.name).sort());
  });

  it.each(Object.entries(CALLS).filter(([, args]) => args !== null))('%s: one copy per client', async (name, args) => {
    const raw = await clients.org.callTool({ name, arguments: typeof args === 'function' ? await args() : (args ?? {}) });
    const [text, ...notes] = texts(raw);
    expect(raw.isError ?? false, text).toBe(false);
    const structured = raw.structuredContent;
    if (structured === undefined) {
      // Text only: the one text block is the answer.
      expect(notes).toEqual([]);
      return;
    }
    expect(isJsonCopy(text ?? '', structured), `${name}'s text repeats structuredContent`).toBe(false);
    // Listings: the text is much smaller than the records (a line per item with ids and names).
    if (name.startsWith('list_')) expect(bytes(text), text).toBeLessThan(bytes(structured) * 0.6);
  });
});
