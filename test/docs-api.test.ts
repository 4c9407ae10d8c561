// docs/api.md, the contract in prose, names every REST operation the app serves and every MCP tool it registers.
// Both lists come from the running code: the OpenAPI document the app serves (which test/openapi.test.ts holds
// equal to the app's routes) and the tool registry of src/composition.ts.
import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import apiDoc from '../docs/api.md?raw';
import { MCP_TOOLS as TOOLS } from '../src/composition';

const OpenApi = z.object({ paths: z.record(z.string(), z.record(z.string(), z.object({ operationId: z.string() }))) });

/** What a reference page fails to name: each operation as `METHOD path` and its operationId, each tool, in code spans. */
function undocumented(doc: string, operations: { method: string; path: string; operationId: string }[], tools: string[]): string[] {
  const missing: string[] = [];
  for (const r of operations) {
    if (!doc.includes(`\`${r.method} ${r.path}\``)) missing.push(`${r.method} ${r.path}`);
    if (!doc.includes(`\`${r.operationId}\``)) missing.push(r.operationId);
  }
  for (const t of tools) if (!doc.includes(`\`${t}\``)) missing.push(`tool ${t}`);
  return missing;
}

describe('docs/api.md covers the API', () => {
  it('finds what a synthetic reference page leaves out', () => {
    const ops = [{ method: 'GET', path: '/v1/data/things/{id}', operationId: 'getThing' }];
    expect(undocumented('`GET /v1/data/things/{id}` and `list_things`', ops, ['list_things', 'get_thing'])).toEqual([
      'getThing',
      'tool get_thing',
    ]);
  });

  it('names every REST operation the app serves (method, path, operationId) and every registered MCP tool', async () => {
    const res = await SELF.fetch('http://api.test/v1/data/openapi.json');
    const { paths } = OpenApi.parse(await res.json());
    const operations = Object.entries(paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, operationId: op.operationId })),
    );
    const tools = TOOLS.map((t) => t.name);
    expect(operations.length).toBeGreaterThanOrEqual(7);
    expect(tools.length).toBeGreaterThanOrEqual(7);
    expect(undocumented(apiDoc, operations, tools)).toEqual([]);
  });
});
