import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { runTool, toolSchema, toolSuccess, type ToolDeps } from './tool-result';
import { createTaskResult, registerTaskHandlers, type BoundTaskSource, type TaskSource, type TaskState } from './tasks';

/**
 * The annotations a tool may carry: one of these, never a hand-written object, so that two tools that behave
 * alike advertise alike. None reaches outside this service (`openWorldHint: false`).
 */
export const ANNOTATIONS = {
  /** Reads; the same call gives the same answer (listings, lookups, search). */
  read: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  /** Reads, but each call spends the daily usage budget (run_query, show_report). */
  meteredRead: { readOnlyHint: true, idempotentHint: false, openWorldHint: false },
  /** Adds a record on each call (a feedback report, a memory) and never destroys anything. */
  append: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
} as const;

type Annotations = (typeof ANNOTATIONS)[keyof typeof ANNOTATIONS];

const BRAND = Symbol('tool reply');

/** What a run returns when the text block is not the JSON of the data: its own rendering, or notes beside it. */
export interface ToolReply<O extends z.ZodType<Record<string, unknown>>> {
  [BRAND]: true;
  data: z.input<O>;
  render?: (structured: z.output<O>) => string;
  notes?: string[];
  /** The result's `_meta`: what only an MCP Apps view needs (hosts pass it to the view, not to the model). */
  meta?: Record<string, unknown>;
}

export function toolReply<O extends z.ZodType<Record<string, unknown>>>(
  _output: O,
  data: z.input<O>,
  options: { render?: (structured: z.output<O>) => string; notes?: string[]; meta?: Record<string, unknown> } = {},
): ToolReply<O> {
  return { [BRAND]: true, data, ...options };
}

function isReply(value: unknown): value is ToolReply<z.ZodType<Record<string, unknown>>> {
  return typeof value === 'object' && value !== null && BRAND in value;
}

const TASK = Symbol('task reply');

/** What a run returns when the call became a task (only when `deps.task` says the client takes one). */
export interface TaskReply {
  [TASK]: true;
  task: TaskState;
}

export function taskReply(task: TaskState): TaskReply {
  return { [TASK]: true, task };
}

function isTaskReply(value: unknown): value is TaskReply {
  return typeof value === 'object' && value !== null && TASK in value;
}

/** A tool's tasks (src/mcp/tasks.ts): in which eras it answers with one, and its tasks for one request. */
export interface ToolTasks<O extends z.ZodType<Record<string, unknown>>> {
  /**
   * Also the 2025-11-25 experimental tasks (`execution.taskSupport: "optional"`): only for a tool whose every task
   * `tasks/list` can list. The 2026-07-28 extension is always offered (the server decides per call).
   */
  experimental: boolean;
  source: (deps: ToolDeps) => TaskSource<z.input<O> | ToolReply<O>>;
}

export interface ToolSpec<I extends z.ZodRawShape, O extends z.ZodType<Record<string, unknown>>> {
  name: string;
  title: string;
  /** What the model reads; a function when it quotes this deployment's settings (caps, limits). */
  description: string | ((deps: ToolDeps) => string);
  /** The arguments: a strict object (an argument the schema does not name is refused, as REST refuses it). */
  input: I;
  /** The result: parsed on every success (undeclared fields dropped) and advertised as the output schema. */
  output: O;
  /**
   * `text`: the result reaches the model once, as the text block only: no `structuredContent` and so no advertised
   * output schema (`output` still parses it). For results that carry rows: clients differ in which of the two they
   * pass to the model (Claude Code only `structuredContent` when present, claude.ai the text, ChatGPT both; see
   * docs/mcp.md "Results"), so only a text-only result reaches every model once. Default `structured`.
   */
  result?: 'structured' | 'text';
  /**
   * A `structured` result's text block: a compact rendering for the clients that read only text (a line per item
   * with the ids and names a model needs), never a second full copy of `structuredContent` (ChatGPT reads both, so
   * a JSON copy would be paid twice). Required for `structured` results; `text` results send their JSON once.
   * Gets the call's arguments too (ids the rendering names).
   */
  text?: (structured: z.output<O>, input: z.output<z.ZodObject<I, z.core.$strict>>) => string;
  annotations: Annotations;
  /**
   * What the tool writes, for a tool that writes at all (the D1 rows it adds). A tool without it is a read tool
   * and must carry a `readOnlyHint: true` annotation; a tool with it must not.
   */
  writes?: string;
  /**
   * Whether this request's principal is offered the tool at all (tools/list and tools/call), for a tool only some
   * principals may use (save_memory: keys with the memory write permission). Default: everyone.
   */
  offeredTo?: (deps: ToolDeps) => Promise<boolean>;
  /** `_meta` of the tool in tools/list (result size hints, a view link). */
  meta?: (deps: ToolDeps) => Record<string, unknown> | undefined;
  /** The tool may answer with a task (a long query): its tasks' handlers. */
  tasks?: ToolTasks<O>;
  run: (input: z.output<z.ZodObject<I, z.core.$strict>>, deps: ToolDeps) => Promise<z.input<O> | ToolReply<O> | TaskReply>;
}

/** A tool ready to be registered on a request's server (see registerTools). */
export interface Tool {
  readonly name: string;
  readonly annotations: Annotations;
  /** Whether this request's principal is offered the tool. */
  offered(deps: ToolDeps): Promise<boolean>;
  register(server: McpServer, deps: ToolDeps): void;
  /** Whether a 2025-11-25 client may ask this tool for a task (`execution.taskSupport`). */
  readonly experimentalTasks: boolean;
  /** This tool's tasks for one request, answered as tool results; undefined for a tool without tasks. */
  taskSource(deps: ToolDeps): BoundTaskSource | undefined;
}

const ALLOWED = new Set<unknown>(Object.values(ANNOTATIONS));

/**
 * One MCP tool: its name and output schema are written once here, its argument and result schemas are converted
 * once per isolate, and every call goes through `runTool` (any throw becomes an `isError` result with the
 * request id) and `toolSuccess` (the result parsed through `output`). Throws when the annotations are not one
 * of ANNOTATIONS or contradict `writes`, so such a tool never reaches tools/list.
 */
export function defineTool<I extends z.ZodRawShape, O extends z.ZodType<Record<string, unknown>>>(spec: ToolSpec<I, O>): Tool {
  const { name, title, description, output, annotations, writes, meta, run, offeredTo, result: form = 'structured', text } = spec;
  if (form === 'structured' && text === undefined) {
    throw new Error(`tool ${name}: a structured result needs its text rendering (text), so no client reads the data twice`);
  }
  if (!ALLOWED.has(annotations)) throw new Error(`tool ${name}: annotations must be one of ANNOTATIONS (read, meteredRead, append)`);
  if (writes === undefined && !annotations.readOnlyHint) {
    throw new Error(`tool ${name}: a read tool (no writes declared) must be readOnlyHint; declare what it writes or use ANNOTATIONS.read`);
  }
  if (writes !== undefined && annotations.readOnlyHint) throw new Error(`tool ${name}: it writes ${writes}, so it cannot be readOnlyHint`);
  const input = z.strictObject(spec.input);
  const inputSchema = toolSchema(input);
  const outputSchema = toolSchema(output);
  const succeed = (result: z.input<O> | ToolReply<O>, args: z.output<typeof input> | undefined): CallToolResult => {
    const reply = isReply(result) ? result : undefined;
    const render =
      reply?.render ?? (form === 'structured' && text && args ? (structured: z.output<O>) => text(structured, args) : undefined);
    const done = toolSuccess(output, reply ? reply.data : (result as z.input<O>), reply?.notes, render);
    if (form === 'text') delete done.structuredContent;
    if (reply?.meta) done._meta = reply.meta;
    return done;
  };
  const answer = (deps: ToolDeps, result: z.input<O> | ToolReply<O> | TaskReply, args: z.output<typeof input>): CallToolResult => {
    if (!isTaskReply(result)) return succeed(result, args);
    if (!deps.task) throw new Error(`tool ${name}: answered with a task to a call that cannot take one`);
    // Not a CallToolResult: the era's task handle (2026 `resultType: "task"`, 2025 `{ task }`), passed through by the SDK.
    return createTaskResult(result.task, deps.task.era) as CallToolResult;
  };
  return {
    name,
    annotations,
    experimentalTasks: spec.tasks?.experimental ?? false,
    taskSource(deps) {
      if (!spec.tasks) return undefined;
      const source = spec.tasks.source(deps);
      const bind = (a: { task: TaskState; outcome?: () => Promise<z.input<O> | ToolReply<O>> }) => {
        const { outcome } = a;
        return outcome
          ? { task: a.task, outcome: () => runTool(deps.ctx, name, async () => succeed(await outcome(), undefined)) }
          : { task: a.task };
      };
      return {
        owns: (id) => source.owns(id),
        get: async (id) => bind(await source.get(id)),
        wait: (id, ms) => source.wait(id, ms),
        cancel: async (id) => bind(await source.cancel(id)),
        ...(source.list ? { list: source.list.bind(source) } : {}),
      };
    },
    offered: (deps) => (offeredTo ? offeredTo(deps) : Promise.resolve(true)),
    register(server, deps) {
      const _meta = meta?.(deps);
      const registered = server.registerTool(
        name,
        {
          title,
          description: typeof description === 'string' ? description : description(deps),
          inputSchema,
          ...(form === 'structured' ? { outputSchema } : {}),
          annotations,
          ...(_meta ? { _meta } : {}),
        },
        (args: z.output<typeof input>) => runTool(deps.ctx, name, async () => answer(deps, await run(args, deps), args)),
      );
      // The SDK's registerTool takes no `execution`; its registered tool carries it into tools/list (2025 only: the
      // 2026 codec strips it, the extension needs no per-tool flag).
      if (spec.tasks?.experimental) registered.execution = { taskSupport: 'optional' };
    },
  };
}

/** Registers `tools` in order on one request's server, each bound to that request's context, and their tasks. */
export function registerTools(server: McpServer, deps: ToolDeps, tools: readonly Tool[]): void {
  for (const tool of tools) tool.register(server, deps);
  registerTaskHandlers(
    server,
    deps,
    tools.flatMap((t) => t.taskSource(deps) ?? []),
  );
}

/** The tools this request's principal is offered, in order (each tool's `offeredTo`, asked once per request). */
export async function offeredTools(deps: ToolDeps, tools: readonly Tool[]): Promise<Tool[]> {
  const offered = await Promise.all(tools.map((t) => t.offered(deps)));
  return tools.filter((_, i) => offered[i]);
}
