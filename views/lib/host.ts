import {
  App,
  applyDocumentTheme,
  applyHostStyleVariables,
  type McpUiHostContext,
  PostMessageTransport,
} from '@modelcontextprotocol/ext-apps';
import type { z } from 'zod';
import { ErrorBodySchema } from './contract';

// The view's side of the MCP Apps bridge: one App per view, connected to the host window, following the host's
// theme and style variables. Fonts stay the system's: a view loads nothing from anywhere.

export type ToolResult = { isError?: boolean; structuredContent?: unknown; content?: unknown[]; _meta?: Record<string, unknown> };

/** The `_meta` key under which show_report sends what only this view needs (layout, chart specs). */
const REPORT_VIEW_META = 'warehouse/report-view';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A result's rows back as objects: the server sends them as arrays in `schema` order (each row once, compact). */
function expandRows(node: Rec): Rec {
  const { rows, schema } = node;
  if (!Array.isArray(rows) || !Array.isArray(schema)) return node;
  const names = schema.map((f) => (isRec(f) && typeof f.name === 'string' ? f.name : ''));
  return { ...node, rows: rows.map((r) => (Array.isArray(r) ? Object.fromEntries(names.map((n, i) => [n, r[i] ?? null])) : r)) };
}

/**
 * The data of a successful result: its structuredContent when a tool sends one, else its text block, which
 * run_query and show_report fill with compact JSON (rows as arrays). show_report's layout and charts come from
 * the result's `_meta`, where the server puts what only this view reads.
 */
export function resultData(result: ToolResult): unknown {
  let data: unknown = result.structuredContent;
  if (data === undefined) {
    try {
      data = JSON.parse(textOf(result));
    } catch {
      return undefined;
    }
  }
  if (!isRec(data)) return data;
  const out = expandRows(data);
  const view = result._meta?.[REPORT_VIEW_META];
  const charts = isRec(view) && isRec(view.chartSpecs) ? view.chartSpecs : {};
  if (Array.isArray(out.sections)) {
    out.sections = out.sections.map((s) => {
      if (!isRec(s)) return s;
      const section = expandRows(s);
      return typeof section.id === 'string' && section.id in charts ? { ...section, chartSpec: charts[section.id] } : section;
    });
  }
  if (isRec(view) && isRec(out.report) && 'dashboardConfig' in view) out.report = { ...out.report, dashboardConfig: view.dashboardConfig };
  return out;
}

export type Outcome<T> = { ok: true; data: T } | { ok: false; message: string };

function textOf(result: ToolResult): string {
  const block = (result.content ?? []).find(
    (c): c is { type: 'text'; text: string } =>
      typeof c === 'object' && c !== null && 'type' in c && c.type === 'text' && 'text' in c && typeof c.text === 'string',
  );
  return block?.text ?? '';
}

/** A tool result read through a view's schema: its data, or a message a person can act on (with the requestId). */
export function readResult<S extends z.ZodType>(schema: S, result: ToolResult): Outcome<z.output<S>> {
  if (result.isError) {
    const text = textOf(result);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const parsed = ErrorBodySchema.safeParse(body);
    if (parsed.success) {
      const { code, message, requestId } = parsed.data.error;
      return { ok: false, message: `${code}: ${message}${requestId ? ` (request ${requestId})` : ''}` };
    }
    return { ok: false, message: text || 'The tool call failed.' };
  }
  const parsed = schema.safeParse(resultData(result));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` (${issue.path.join('.')}: ${issue.message})` : '';
    return { ok: false, message: `The result has no data this view can show${where}; see the text result.` };
  }
  return { ok: true, data: parsed.data };
}

export interface ViewHost {
  app: App;
  locale(): string | undefined;
  /** Whether the host lets the view call the server's tools (for "load more"). */
  canCallTools(): boolean;
}

function applyContext(ctx: McpUiHostContext | undefined) {
  if (!ctx) return;
  if (ctx.theme) applyDocumentTheme(ctx.theme);
  if (ctx.styles?.variables) applyHostStyleVariables(ctx.styles.variables);
  const insets = ctx.safeAreaInsets;
  if (insets) {
    document.body.style.padding = `${insets.top}px ${insets.right}px ${insets.bottom}px ${insets.left}px`;
  }
}

/**
 * Connects to the host. `onResult` receives each tool result the host sends (the first one, and any re-run);
 * `onLocale` re-renders when the host's locale changes.
 */
export async function connectView(name: string, onResult: (result: ToolResult) => void, onContextChange?: () => void): Promise<ViewHost> {
  // Before the host answers: the system theme, so a dark host never flashes white.
  applyDocumentTheme(matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
  const app = new App({ name, version: '1.0.0' }, {});
  let locale: string | undefined;
  app.ontoolresult = (result) => onResult(result);
  app.onhostcontextchanged = (ctx) => {
    applyContext(ctx);
    if (ctx.locale && ctx.locale !== locale) {
      locale = ctx.locale;
      onContextChange?.();
    }
  };
  await app.connect(new PostMessageTransport(window.parent, window.parent));
  const ctx = app.getHostContext();
  applyContext(ctx);
  locale = ctx?.locale;
  return {
    app,
    locale: () => locale,
    canCallTools: () => app.getHostCapabilities()?.serverTools !== undefined,
  };
}

/** Shorthand for building DOM: a tag, a class and children (strings become text nodes, never HTML). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.append(...children);
  return node;
}

/** Replaces the view's content with an error a person can read (and quote, with its request id). */
export function showError(main: HTMLElement, message: string): void {
  main.replaceChildren(el('p', 'error', message));
  main.setAttribute('aria-busy', 'false');
}

/**
 * Runs a view: connects to the host, reads each tool result the host sends through `schema`, and calls `show`
 * with the data (again when the host's locale changes). A result that arrives before the handshake finishes is
 * kept until it does; one the schema refuses, or a tool error, is shown as an error.
 */
export function startView<S extends z.ZodType>(name: string, schema: S, show: (data: z.output<S>, host: ViewHost) => void): void {
  const main = document.getElementById('app') ?? document.body;
  let host: ViewHost | undefined;
  let pending: ToolResult | undefined;
  let data: z.output<S> | undefined;
  const render = () => {
    if (host && data !== undefined) {
      show(data, host);
      main.setAttribute('aria-busy', 'false');
    }
  };
  const accept = (result: ToolResult) => {
    if (!host) {
      pending = result;
      return;
    }
    const read = readResult(schema, result);
    if (!read.ok) return showError(main, read.message);
    data = read.data;
    render();
  };
  connectView(name, accept, render)
    .then((h) => {
      host = h;
      if (pending) accept(pending);
    })
    .catch((err: unknown) => showError(main, `Could not connect to the host: ${err instanceof Error ? err.message : String(err)}`));
}
