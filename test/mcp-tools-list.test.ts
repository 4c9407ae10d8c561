import { beforeAll, describe, expect, it } from 'vitest';
import { connectMcp } from './mcp-client';
import { seedDemo, TEST_KEYS } from './seed';

const key = TEST_KEYS.brand;

beforeAll(async () => {
  await seedDemo();
});

interface JsonSchemaObject {
  type?: string;
  properties?: Record<string, { description?: string }>;
  required?: string[];
}

describe('MCP tools/list', () => {
  it('offers the spec tools (plus get_report) with titles, model-facing descriptions and annotations', async () => {
    const client = await connectMcp(key);
    const { tools } = await client.listTools();
    await client.close();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual(
      ['get_report', 'list_brands', 'list_memories', 'list_report_queries', 'list_reports', 'list_saved_queries', 'report_data_issue', 'run_query', 'save_memory'],
    );
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(120);
      expect(tool.annotations?.openWorldHint, tool.name).toBe(false);
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(tool.name !== 'report_data_issue' && tool.name !== 'save_memory');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      const input: JsonSchemaObject = tool.inputSchema;
      // Every input field is described for the model.
      for (const [field, schema] of Object.entries(input.properties ?? {})) {
        expect(schema.description, `${tool.name}.${field}`).toBeTruthy();
      }
    }
    expect(byName.get('report_data_issue')?.annotations).toMatchObject({ destructiveHint: false, idempotentHint: false });
    expect(byName.get('list_reports')?.annotations?.idempotentHint).toBe(true);
    // Read-only, but each run spends the daily budget.
    expect(byName.get('run_query')?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: false });
  });

  it('tells the model the table naming rule, discovery queries, paging and the flows', async () => {
    const client = await connectMcp(key);
    const { tools } = await client.listTools();
    const instructions = client.getInstructions() ?? '';
    await client.close();
    const text = (name: string) => tools.find((t) => t.name === name)?.description ?? '';
    expect(text('list_brands')).toContain('`service-v1.<dataset>.<table>`');
    expect(text('list_reports')).toMatch(/nextCursor/);
    expect(text('list_report_queries')).toMatch(/period/);
    expect(instructions).toMatch(/Flow A.*Flow B.*Flow C/s);
    expect(instructions).toContain('INFORMATION_SCHEMA.COLUMNS');
    expect(instructions).toContain('table_metadata');
    expect(instructions).toMatch(/LIMIT n OFFSET m/);
  });

  it('publishes input and output schemas that match the contract', async () => {
    const client = await connectMcp(key);
    const { tools } = await client.listTools();
    await client.close();
    const schemaOf = (name: string, which: 'inputSchema' | 'outputSchema'): JsonSchemaObject => {
      const t = tools.find((x) => x.name === name);
      if (!t?.[which]) throw new Error(`${name} has no ${which}`);
      return t[which];
    };
    expect(Object.keys(schemaOf('list_reports', 'inputSchema').properties ?? {}).sort()).toEqual(['brandId', 'cursor', 'limit', 'type']);
    expect(schemaOf('list_reports', 'outputSchema').required?.sort()).toEqual(['hasMore', 'nextCursor', 'reports']);
    expect(schemaOf('list_report_queries', 'inputSchema').required).toEqual(['reportId']);
    expect(schemaOf('report_data_issue', 'inputSchema').required).toEqual(['summary']);
    expect(Object.keys(schemaOf('report_data_issue', 'inputSchema').properties ?? {}).sort()).toEqual(
      ['brandId', 'expected', 'observed', 'severity', 'summary', 'transcript'],
    );
    expect(schemaOf('report_data_issue', 'outputSchema').required).toEqual(['feedbackRef']);
    expect(schemaOf('list_brands', 'outputSchema').required).toEqual(['brands']);
    expect(Object.keys(schemaOf('run_query', 'inputSchema').properties ?? {}).sort()).toEqual(['brandId', 'dryRun', 'period', 'queryId', 'sql']);
    expect(schemaOf('run_query', 'inputSchema').required).toBeUndefined();
    expect(schemaOf('run_query', 'outputSchema').required?.sort()).toEqual(['brandId', 'rowCount', 'rows', 'truncated']);
    expect(Object.keys(schemaOf('run_query', 'outputSchema').properties ?? {})).toContain('note');
  });
});
