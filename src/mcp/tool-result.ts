import type { CallToolResult, StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ApiError, reportError } from '../errors';
import { MAX_ID_LENGTH } from '../schemas/fields';
import type { OpContext } from '../context';

/** How the tools/call being served may be answered with a task (src/mcp/tasks.ts): which era's tasks, if any. */
export type TaskMode = { era: 'extension' } | { era: 'experimental' };

/** What every tool group receives: the request's operation context (principal, env, request id, log). */
export interface ToolDeps {
  ctx: OpContext;
  /** The tools/call being served may be answered with a task of this era (the client declared or asked for it). */
  task?: TaskMode;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Keys of an output schema node that carry prose or bounds, not shape (see compactJsonSchema). */
const OUTPUT_ONLY_PROSE = new Set(['description', 'title', 'format', 'minLength', 'maxLength', 'pattern']);

const ANY_JSON_TYPES = ['string', 'number', 'boolean', 'null', 'array', 'object'];

/** The JSON Schema of "any JSON value" spelled as a union (JsonValueSchema): it tells a client nothing `{}` does not. */
function isAnyJson(node: Record<string, unknown>): boolean {
  const { anyOf } = node;
  return (
    Array.isArray(anyOf) &&
    anyOf.length === ANY_JSON_TYPES.length &&
    ANY_JSON_TYPES.every((t) => anyOf.some((branch) => isRecord(branch) && branch.type === t))
  );
}

/**
 * The JSON Schema an assistant reads in tools/list, without what carries no information for it: `$schema`
 * (2020-12 is MCP's default dialect), zod's ±2^53 bounds on integers, `propertyNames: string` (JSON keys are
 * strings), the six-branch "any JSON" union, examples, and in outputs `additionalProperties: false` and the
 * prose and bounds of each field (the REST bodies' OpenAPI document describes them). Validation is unchanged: it
 * still runs the zod schema.
 */
function compactJsonSchema(node: unknown, io: 'input' | 'output'): unknown {
  if (Array.isArray(node)) return node.map((n) => compactJsonSchema(n, io));
  if (!isRecord(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema') continue;
    // Examples serve the OpenAPI document's readers; the descriptions already say what a value looks like.
    if (key === 'examples' || key === 'example') continue;
    // "Not empty" is what every id and text argument requires; the refusal names the field, so it need not be sent.
    if (key === 'minLength' && value === 1) continue;
    // Likewise the length cap every id and table name shares (MAX_ID_LENGTH): it only refuses garbage.
    if (key === 'maxLength' && value === MAX_ID_LENGTH) continue;
    // Outputs are the REST bodies, described field by field in the OpenAPI document; the model reads the values
    // themselves, so only their shape is sent (names, types, enums), not prose or input-side bounds.
    if (io === 'output' && OUTPUT_ONLY_PROSE.has(key) && typeof value !== 'object') continue;
    // Outputs: toolSuccess already strips undeclared fields, so "no extras" is a promise, not a constraint to send.
    if (io === 'output' && key === 'additionalProperties' && value === false) continue;
    if (key === 'anyOf' && isAnyJson(node)) continue;
    if ((key === 'minimum' && value === Number.MIN_SAFE_INTEGER) || (key === 'maximum' && value === Number.MAX_SAFE_INTEGER)) continue;
    if (key === 'propertyNames' && isRecord(value) && value.type === 'string' && Object.keys(value).length === 1) continue;
    out[key] = compactJsonSchema(value, io);
  }
  return out;
}

/** A nested object or array of an output reduced to its type (its items are described in the OpenAPI document). */
function shallow(node: unknown): unknown {
  if (!isRecord(node)) return node;
  if (Array.isArray(node.anyOf)) return { anyOf: node.anyOf.map(shallow) };
  if (node.type === 'object' || node.type === 'array') return { type: node.type };
  return node;
}

/**
 * An output advertises its top-level shape (property names, types, required), which is what a client validates
 * `structuredContent` against and what a model needs to read it; nested rows and records are typed `object` /
 * `array` without their members, which the REST bodies' OpenAPI document describes field by field.
 */
function topLevelOnly(node: Record<string, unknown>): Record<string, unknown> {
  if (!isRecord(node.properties)) return node;
  return { ...node, properties: Object.fromEntries(Object.entries(node.properties).map(([k, v]) => [k, shallow(v)])) };
}

/** A node without any `description` below it (the node's own is kept by the caller). */
function withoutNestedProse(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutNestedProse);
  if (!isRecord(node)) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k]) => k !== 'description')
      .map(([k, v]) => [k, withoutNestedProse(v)]),
  );
}

/**
 * Inputs keep one description per argument: the argument's own says what a model must know (e.g. `period`:
 * "cadence DAILY (yesterday) ... or startDate + endDate"), so the members of a nested argument carry only their
 * types, enums and bounds.
 */
function argumentProseOnly(node: Record<string, unknown>): Record<string, unknown> {
  if (!isRecord(node.properties)) return node;
  const properties = Object.fromEntries(
    Object.entries(node.properties).map(([k, v]) => {
      if (!isRecord(v)) return [k, v];
      const { description, ...rest } = v;
      const bare = withoutNestedProse(rest);
      return [k, description === undefined || !isRecord(bare) ? bare : { description, ...bare }];
    }),
  );
  return { ...node, properties };
}

function compactRecord(node: Record<string, unknown>, io: 'input' | 'output'): Record<string, unknown> {
  const out = compactJsonSchema(node, io);
  if (!isRecord(out)) return node;
  return io === 'output' ? topLevelOnly(out) : argumentProseOnly(out);
}

/** A JSON value frozen all the way down, so that a copy shared between requests cannot be changed by one of them. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Each zod schema's advertised JSON Schemas by direction and options, made once per isolate (the tools never change). */
const conversions = new WeakMap<z.ZodType, Map<string, Record<string, unknown>>>();

/**
 * A zod schema whose advertised JSON Schema is compacted (see compactJsonSchema); parsing is the zod schema's.
 * Converting and compacting cost more than the tool call they describe (every request builds its own McpServer,
 * and tools/call converts the called tool's schemas), so each conversion is made once per isolate per zod schema
 * and shared, frozen so that no request can change what the next one sends.
 */
export function toolSchema<S extends z.ZodType>(schema: S): StandardSchemaWithJSON<z.input<S>, z.output<S>> {
  const std = schema['~standard'];
  const made = conversions.get(schema) ?? new Map<string, Record<string, unknown>>();
  conversions.set(schema, made);
  const convert = (io: 'input' | 'output', options: Parameters<typeof std.jsonSchema.input>[0]): Record<string, unknown> => {
    const key = `${io} ${JSON.stringify(options)}`;
    let json = made.get(key);
    if (!json) {
      json = deepFreeze(compactRecord(std.jsonSchema[io](options), io));
      made.set(key, json);
    }
    return json;
  };
  return {
    '~standard': { ...std, jsonSchema: { input: (options) => convert('input', options), output: (options) => convert('output', options) } },
  };
}

/** Claude Code keeps a text result over 50,000 characters in a file unless the tool raises the ceiling (max 500,000). */
const CLAUDE_RESULT_CHARS = { default: 50_000, max: 500_000 } as const;

/**
 * `_meta` for a tool whose caps allow text results above Claude Code's default ceiling, so they reach the model
 * inline. Nothing for tools that stay below it.
 */
export function resultSizeMeta(maxChars: number): Record<string, unknown> | undefined {
  if (maxChars <= CLAUDE_RESULT_CHARS.default) return undefined;
  return { 'anthropic/maxResultSizeChars': Math.min(maxChars, CLAUDE_RESULT_CHARS.max) };
}

/**
 * A listing as a structured result's text rendering (ToolSpec.text): a title line, then a header and one
 * tab-separated line per item, with only the ids and names a model needs (the full records are in
 * `structuredContent`). Tabs and line breaks inside a value become spaces, so every item stays one line.
 */
export function textTable(
  title: string,
  columns: readonly string[],
  rows: readonly (readonly (string | number | null | undefined)[])[],
): string {
  const cell = (v: string | number | null | undefined) =>
    v === null || v === undefined || v === '' ? '-' : String(v).replace(/\s+/g, ' ');
  return [title, columns.join('\t'), ...rows.map((r) => r.map(cell).join('\t'))].join('\n');
}

/** The line a paged listing's text ends with while more pages remain. */
export function nextPageLine(nextCursor: string | null): string[] {
  return nextCursor === null ? [] : [`More: call again with cursor ${JSON.stringify(nextCursor)}.`];
}

/**
 * A successful tool result: `structuredContent` parsed through the tool's output schema, and the same JSON as
 * text for clients that only read `content` (or, with `render`, the tool's own rendering of the parsed data).
 * Parsing strips fields the schema does not declare: the advertised JSON Schema has `additionalProperties: false`,
 * and clients (the SDK's Client among them) reject extras. `notes` become extra text blocks the model reads next
 * to the data.
 */
export function toolSuccess<S extends z.ZodType<Record<string, unknown>>>(
  schema: S,
  data: z.input<S>,
  notes: string[] = [],
  render: (structured: z.output<S>) => string = (structured) => JSON.stringify(structured),
): CallToolResult {
  const structured = schema.parse(data);
  return {
    structuredContent: structured,
    content: [{ type: 'text', text: render(structured) }, ...notes.map((text) => ({ type: 'text' as const, text }))],
  };
}

/** 400 VALIDATION for one tool argument: `message` for the model, `issue` beside the argument it names (`path`). */
export function invalidArgument(message: string, path: string, issue: string): ApiError {
  return new ApiError('VALIDATION', message, { details: { in: 'arguments', issues: [{ path, message: issue }] } });
}

/**
 * A failed tool result with the REST error body `{ error: { code, message, requestId, details? } }` as its
 * text. Deliberately no `structuredContent`: the v1 SDK Client (@modelcontextprotocol/sdk 1.32) validates it against the
 * tool's output schema even when `isError` is set (typescript-sdk issue #1943) and would throw away the error.
 */
export function toolFailure(ctx: OpContext, tool: string, err: unknown): CallToolResult {
  const { body } = reportError(err, ctx.requestId, ctx.log, { transport: 'mcp', tool });
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/** Runs one tool call: success through `toolSuccess`, any throw through `toolFailure` (never a JSON-RPC error). */
export async function runTool(ctx: OpContext, tool: string, call: () => Promise<CallToolResult>): Promise<CallToolResult> {
  const started = Date.now();
  try {
    const result = await call();
    ctx.log.info('mcp tool ok', { tool, ms: Date.now() - started });
    return result;
  } catch (err) {
    return toolFailure(ctx, tool, err);
  }
}
