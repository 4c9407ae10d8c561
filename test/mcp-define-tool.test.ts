// The one tool seam (src/mcp/define-tool.ts): annotations come from a small set, and a tool that declares no
// writes cannot be registered unless it is readOnlyHint. Checked when the tool is defined, so a wrong tool never
// reaches tools/list.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ANNOTATIONS, defineTool } from '../src/mcp/define-tool';
import { MCP_TOOLS as TOOLS } from '../src/composition';

const spec = {
  title: 'T',
  description: 'd',
  input: {},
  output: z.object({ ok: z.boolean() }),
  text: ({ ok }: { ok: boolean }) => `ok ${ok}`,
  run: async () => ({ ok: true }),
};

describe('defineTool', () => {
  it('refuses a read tool (no writes declared) whose annotations are not readOnlyHint', () => {
    expect(() => defineTool({ ...spec, name: 'sneaky_write', annotations: ANNOTATIONS.append })).toThrow(
      /sneaky_write: a read tool \(no writes declared\) must be readOnlyHint/,
    );
  });

  it('refuses a tool that declares writes but says readOnlyHint', () => {
    expect(() => defineTool({ ...spec, name: 'lying_read', annotations: ANNOTATIONS.read, writes: 'rows' })).toThrow(
      /lying_read: it writes rows, so it cannot be readOnlyHint/,
    );
  });

  it('refuses hand-written annotations, even ones equal to a member of the set', () => {
    const copy = { readOnlyHint: true, idempotentHint: true, openWorldHint: false } as const;
    expect(() => defineTool({ ...spec, name: 'own_hints', annotations: copy })).toThrow(
      /own_hints: annotations must be one of ANNOTATIONS/,
    );
  });

  it('refuses a structured result without its text rendering (the text must never be a second JSON copy)', () => {
    expect(() => defineTool({ ...spec, text: undefined, name: 'twice', annotations: ANNOTATIONS.read })).toThrow(
      /twice: a structured result needs its text rendering/,
    );
    expect(defineTool({ ...spec, text: undefined, result: 'text', name: 'once', annotations: ANNOTATIONS.read }).name).toBe('once');
  });

  it('accepts a read tool and a declared writer', () => {
    expect(defineTool({ ...spec, name: 'a_read', annotations: ANNOTATIONS.read }).name).toBe('a_read');
    expect(defineTool({ ...spec, name: 'a_write', annotations: ANNOTATIONS.append, writes: 'rows' }).annotations.readOnlyHint).toBe(false);
  });

  it('every registered tool has a unique name and one of the allowed annotations', () => {
    const names = TOOLS.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const tool of TOOLS) expect(Object.values(ANNOTATIONS), tool.name).toContain(tool.annotations);
  });
});
