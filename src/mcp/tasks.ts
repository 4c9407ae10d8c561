import { ProtocolError, ProtocolErrorCode, type CallToolResult, type McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ApiError, errorBody } from '../errors';
import type { TaskMode, ToolDeps } from './tool-result';

/**
 * MCP tasks, both eras this endpoint speaks (docs/mcp.md, "Long queries (tasks)"). The SDK ships the vocabulary
 * but no tasks runtime, so the wire is ours, on its request-handler seam:
 * - 2026-07-28, the Tasks extension `io.modelcontextprotocol/tasks` (SEP-2663): a client declares it in the request's
 *   `_meta` client capabilities; the server decides per call to answer `resultType: "task"`; the client polls
 *   `tasks/get` (status, and the final result inline) and may `tasks/cancel` (an empty acknowledgement).
 * - 2025-11-25, the experimental tasks (SEP-1686): `capabilities.tasks` and `execution.taskSupport` on a tool; the
 *   client asks with `task` in the `tools/call` params and gets `{ task }` at once; `tasks/get`, `tasks/result`
 *   (blocks until the end), `tasks/list`, `tasks/cancel` (answers the task, `cancelled`).
 * The two are not wire compatible; both map onto one task state (TaskState), which the features fill from their
 * durable records. The SDK's 2026 codec strips `capabilities.tasks` and `execution` from 2026 answers itself.
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The `_meta` key of a task's progress (elapsed time, bytes processed so far), in both eras. */
export const TASK_PROGRESS_META = 'warehouse/progress';

const Rec = z.record(z.string(), z.unknown());

/**
 * The task mode of one parsed JSON-RPC body: a 2026 `tools/call` whose client capabilities declare the extension,
 * or a 2025 `tools/call` carrying `task`. Anything else (other methods, batches, no declaration): none.
 */
export function taskModeOf(body: unknown, legacy: boolean): TaskMode | undefined {
  const msg = Rec.safeParse(body);
  if (!msg.success || msg.data.method !== 'tools/call') return undefined;
  const params = Rec.safeParse(msg.data.params);
  if (!params.success) return undefined;
  if (legacy) return Rec.safeParse(params.data.task).success ? { era: 'experimental' } : undefined;
  const caps = Rec.safeParse(Rec.safeParse(params.data._meta).data?.['io.modelcontextprotocol/clientCapabilities']);
  const extensions = Rec.safeParse(caps.data?.extensions);
  return Rec.safeParse(extensions.data?.[TASKS_EXTENSION]).success ? { era: 'extension' } : undefined;
}

/** The statuses a task of ours takes (neither era's `input_required`: a query never asks the client anything). */
export type TaskStatus = 'working' | 'completed' | 'failed' | 'cancelled';

/** One task as it stands, in neither era's wire form (see wireTask). Times in ms since the epoch. */
export interface TaskState {
  taskId: string;
  /** 2026 wording: `failed` is never used for a tool's own error (that is `completed` with an `isError` result). */
  status: TaskStatus;
  statusMessage: string;
  createdAt: number;
  lastUpdatedAt: number;
  ttlMs: number | null;
  pollIntervalMs?: number;
  /** What a status poll reports besides the status: time since the start, bytes BigQuery processed so far. */
  progress: { elapsedMs: number; bytesProcessed: number | null };
  /** The tool's answer ended in an error result (`isError`): 2025 calls such a task `failed`, 2026 `completed`. */
  toolError?: boolean;
}

/**
 * A task and, once it ended, what the tool call answers (produced only when asked: it may read a result page): the
 * result, or the error result a synchronous call would have given (a cancelled query's QUERY_CANCELLED included).
 */
export interface TaskAnswer<R> {
  task: TaskState;
  outcome?: () => Promise<R>;
}

/**
 * A tool's tasks, bound to one request's principal: every method refuses (JOB_NOT_FOUND) a task its principal
 * did not start, the same answer as for one that never existed.
 */
export interface TaskSource<R> {
  /** Whether `taskId` has this source's form (ownership is checked by the methods). */
  owns(taskId: string): boolean;
  get(taskId: string): Promise<TaskAnswer<R>>;
  /** Waits up to `ms` for the task to end (2025 `tasks/result` blocks). */
  wait(taskId: string, ms: number): Promise<void>;
  /** Asks the task to stop; answers it as it now stands. */
  cancel(taskId: string): Promise<TaskAnswer<R>>;
  /** The principal's tasks, newest first (2025 `tasks/list`); absent for sources whose tasks cannot be listed. */
  list?(cursor: string | undefined): Promise<{ tasks: TaskState[]; nextCursor?: string }>;
}

/** A tool's task source once its answers are tool results. */
export type BoundTaskSource = TaskSource<CallToolResult>;

const iso = (ms: number) => new Date(ms).toISOString();

function wireStatus(t: TaskState, era: TaskMode['era']): TaskStatus {
  return era === 'experimental' && t.status === 'completed' && t.toolError ? 'failed' : t.status;
}

/** The task in the era's wire form: 2026 `ttlMs` / `pollIntervalMs`, 2025 `ttl` / `pollInterval`. */
export function wireTask(t: TaskState, era: TaskMode['era']): Record<string, unknown> {
  const base = {
    taskId: t.taskId,
    status: wireStatus(t, era),
    statusMessage: t.statusMessage,
    createdAt: iso(t.createdAt),
    lastUpdatedAt: iso(t.lastUpdatedAt),
  };
  const poll = t.pollIntervalMs;
  return era === 'extension'
    ? { ...base, ttlMs: t.ttlMs, ...(poll === undefined ? {} : { pollIntervalMs: poll }) }
    : { ...base, ttl: t.ttlMs, ...(poll === undefined ? {} : { pollInterval: poll }) };
}

const progressMeta = (t: TaskState) => ({ _meta: { [TASK_PROGRESS_META]: t.progress } });

/**
 * What a tools/call answers when it became a task: 2026 `resultType: "task"` + the task; 2025 `{ task }`, with the
 * text SEP-1686 suggests a host may hand the model meanwhile (`model-immediate-response`) also as `content`, which
 * the SDK's 2025 result check requires beside `task`.
 */
export function createTaskResult(t: TaskState, era: TaskMode['era']): Record<string, unknown> {
  if (era === 'extension') return { resultType: 'task', ...wireTask(t, era), ...progressMeta(t) };
  const meanwhile = `Started as task ${t.taskId} (${t.statusMessage}); its result comes with tasks/result.`;
  return {
    task: wireTask(t, era),
    content: [{ type: 'text', text: meanwhile }],
    _meta: { ...progressMeta(t)._meta, 'io.modelcontextprotocol/model-immediate-response': meanwhile },
  };
}

const TERMINAL: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

/** A task id this principal may not see, or that does not exist: JSON-RPC invalid params, with our code and request id. */
function notFound(err: ApiError, deps: ToolDeps): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Task not found: ${err.message}`, errorBody(err, deps.ctx.requestId).error);
}

const TaskIdParams = z.object({ taskId: z.string().min(1) }).passthrough();
const ListParams = z.object({ cursor: z.string().optional() }).passthrough();

/**
 * Registers `tasks/get`, `tasks/cancel` (both eras), `tasks/result` and `tasks/list` (2025 only: the SDK answers
 * them -32601 on 2026-07-28, as SEP-2663 requires) on one request's server, dispatching each task id to the
 * source that owns it.
 */
export function registerTaskHandlers(server: McpServer, deps: ToolDeps, sources: readonly BoundTaskSource[]): void {
  if (sources.length === 0) return;
  const sourceOf = (taskId: string) => {
    const source = sources.find((s) => s.owns(taskId));
    if (!source) throw notFound(new ApiError('JOB_NOT_FOUND', `no task ${JSON.stringify(taskId)} for these credentials`), deps);
    return source;
  };
  // Our refusals become JSON-RPC errors: a task another principal started is "not found", as one that never existed.
  const guard = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      if (err instanceof ApiError && err.code === 'JOB_NOT_FOUND') throw notFound(err, deps);
      if (err instanceof ApiError)
        throw new ProtocolError(ProtocolErrorCode.InternalError, err.message, errorBody(err, deps.ctx.requestId).error);
      throw err;
    }
  };
  const raw = server.server;
  /**
   * The era of a tasks/* request: 2026 requests carry the `_meta` envelope. SEP-2663: a 2026 request whose client
   * capabilities do not declare the extension gets -32021 naming it (the 2025 methods have no such gate).
   */
  const eraOf = (envelope: unknown): TaskMode['era'] => {
    if (envelope === undefined) return 'experimental';
    if (taskModeOf({ method: 'tools/call', params: { _meta: envelope } }, false) === undefined) {
      throw new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, 'Missing required client capability', {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    }
    return 'extension';
  };

  raw.setRequestHandler('tasks/get', { params: TaskIdParams }, (params, ctx) =>
    guard(async () => {
      const era = eraOf(ctx.mcpReq.envelope);
      const { task, outcome } = await sourceOf(params.taskId).get(params.taskId);
      // 2026: the final result rides inside the task; 2025 reads it with tasks/result.
      const result = era === 'extension' && outcome && task.status !== 'cancelled' ? { result: await outcome() } : {};
      return { ...wireTask(task, era), ...result, ...progressMeta(task) };
    }),
  );

  raw.setRequestHandler('tasks/cancel', { params: TaskIdParams }, (params, ctx) =>
    guard(async () => {
      const era = eraOf(ctx.mcpReq.envelope);
      const source = sourceOf(params.taskId);
      if (era === 'experimental') {
        // SEP-1686: a task already ended cannot be cancelled (-32602); the answer is the task, now cancelled.
        const before = await source.get(params.taskId);
        if (TERMINAL.includes(before.task.status)) {
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task ${params.taskId} already ended (${wireStatus(before.task, era)})`);
        }
      }
      const { task } = await source.cancel(params.taskId);
      // SEP-2663: an acknowledgement only; the state is read with tasks/get.
      return era === 'extension' ? {} : { ...wireTask(task, era), ...progressMeta(task) };
    }),
  );

  // SEP-2663 tasks/update answers input requests; ours never ask for input, so a known task gets the empty ack.
  raw.setRequestHandler('tasks/update', { params: TaskIdParams }, (params, ctx) =>
    guard(async () => {
      if (eraOf(ctx.mcpReq.envelope) === 'experimental') throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
      await sourceOf(params.taskId).get(params.taskId);
      return {};
    }),
  );

  raw.setRequestHandler('tasks/result', { params: TaskIdParams }, (params) =>
    guard(async () => {
      const source = sourceOf(params.taskId);
      // SEP-1686: blocks until the task ends; bounded by the task's own deadline (the source's wait).
      let answer = await source.get(params.taskId);
      while (!TERMINAL.includes(answer.task.status)) {
        await source.wait(params.taskId, 10_000);
        answer = await source.get(params.taskId);
      }
      if (!answer.outcome) throw new ApiError('INTERNAL', `task ${params.taskId} ended without an answer`);
      const result = await answer.outcome();
      const related = { 'io.modelcontextprotocol/related-task': { taskId: params.taskId } };
      return { ...result, _meta: { ...result._meta, ...related } };
    }),
  );

  raw.setRequestHandler('tasks/list', { params: ListParams }, (params) =>
    guard(async () => {
      const listing = sources.find((s) => s.list !== undefined);
      if (!listing?.list) return { tasks: [] };
      const { tasks, nextCursor } = await listing.list(params.cursor);
      return { tasks: tasks.map((t) => wireTask(t, 'experimental')), ...(nextCursor ? { nextCursor } : {}) };
    }),
  );
}
