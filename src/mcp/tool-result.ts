import type { CallToolResult } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { describeError, errorBody, toApiError } from '../errors';
import type { OpContext } from '../operations/context';

/** What every tool group receives: the request's operation context (principal, env, request id, log). */
export interface ToolDeps {
  ctx: OpContext;
}

/**
 * A successful tool result: `structuredContent` parsed through the tool's output schema, and the same JSON as
 * text for clients that only read `content`. Parsing strips fields the schema does not declare: the advertised
 * JSON Schema has `additionalProperties: false`, and clients (the SDK's Client among them) reject extras.
 * `notes` become extra text blocks the model reads next to the data.
 */
export function toolSuccess<S extends z.ZodType<Record<string, unknown>>>(
  schema: S,
  data: z.input<S>,
  notes: string[] = [],
): CallToolResult {
  const structured = schema.parse(data);
  return {
    structuredContent: structured,
    content: [{ type: 'text', text: JSON.stringify(structured) }, ...notes.map((text) => ({ type: 'text' as const, text }))],
  };
}

/**
 * A failed tool result with the REST error body `{ error: { code, message, requestId, details? } }` as its
 * text. Deliberately no `structuredContent`: @modelcontextprotocol/sdk's Client (1.32) validates it against the
 * tool's output schema even when `isError` is set (typescript-sdk issue #1943) and would throw away the error.
 */
export function toolFailure(ctx: OpContext, tool: string, err: unknown): CallToolResult {
  const apiErr = toApiError(err);
  if (apiErr.status >= 500) {
    ctx.log.error('mcp tool failed', { tool, code: apiErr.code, internal: describeError(apiErr.internal ?? err) });
  } else {
    ctx.log.info('mcp tool rejected', {
      tool,
      code: apiErr.code,
      ...(apiErr.internal !== undefined ? { internal: describeError(apiErr.internal) } : {}),
    });
  }
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(errorBody(apiErr, ctx.requestId)) }] };
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
