import { RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps/server';
import type { McpServer } from '@modelcontextprotocol/server';
import type { Env } from '../env';
import { describeError } from '../errors';
import type { ToolDeps } from './tool-result';

/**
 * The MCP Apps views (io.modelcontextprotocol/ui): self-contained HTML built from views/ by
 * scripts/build-views.mjs into dist/views, deployed as Workers Static Assets (binding VIEWS) so they stay out of
 * the Worker's JavaScript bundle, and served here as `ui://` resources. A tool links its view in
 * `_meta.ui.resourceUri`; hosts without app support ignore the link and read the tool's result as before.
 */
export const VIEWS = {
  result: {
    name: 'result-view',
    uri: 'ui://warehouse-query-api/result-view.html',
    file: 'result-view.html',
    title: 'Query result',
    description:
      'A run_query result as a sortable table with its types, row totals, "load more" through the result cursor and an optional chart.',
  },
  report: {
    name: 'report-view',
    uri: 'ui://warehouse-query-api/report-view.html',
    file: 'report-view.html',
    title: 'Report dashboard',
    description:
      "A report's dashboard: its tiles in order (KPIs, charts from each section's chartSpec, tables), " +
      'its instructions and the window used.',
  },
} as const;

export type View = (typeof VIEWS)[keyof typeof VIEWS];

/**
 * The views' resource `_meta`: a CSP that declares no external domain (no connections, no remote scripts,
 * styles, fonts or images, no frames). Everything a view needs is inside its HTML.
 */
const VIEW_RESOURCE_META = {
  ui: { csp: { connectDomains: [], resourceDomains: [], frameDomains: [] }, prefersBorder: true },
};

/** A tool's `_meta` linking it to its view, in the current spelling and the older flat key hosts also read. */
export function viewMeta(view: View): Record<string, unknown> {
  return { ui: { resourceUri: view.uri }, [RESOURCE_URI_META_KEY]: view.uri };
}

/** One read per file per isolate: the assets only change with a deploy, which starts new isolates. */
const cache = new Map<string, Promise<string>>();

async function fetchView(env: Env, file: string): Promise<string> {
  // The assets binding serves by path; the host part of the URL is ignored.
  const res = await env.VIEWS.fetch(new Request(`https://assets.invalid/${file}`));
  if (!res.ok)
    throw new Error(`view ${file} is missing from the VIEWS assets (status ${res.status}); run npm run build:views before deploying`);
  return res.text();
}

export function readView(env: Env, file: string): Promise<string> {
  let html = cache.get(file);
  if (!html) {
    html = fetchView(env, file);
    // A failed read is not cached: the next request tries again.
    html.catch(() => cache.delete(file));
    cache.set(file, html);
  }
  return html;
}

/** Lists both views in resources/list and serves them through resources/read. */
export function registerViews(server: McpServer, { ctx }: ToolDeps): void {
  for (const view of Object.values(VIEWS)) {
    server.registerResource(
      view.name,
      view.uri,
      { title: view.title, description: view.description, mimeType: RESOURCE_MIME_TYPE, _meta: VIEW_RESOURCE_META },
      async (uri) => {
        try {
          const text = await readView(ctx.env, view.file);
          return { contents: [{ uri: uri.href, mimeType: RESOURCE_MIME_TYPE, text, _meta: VIEW_RESOURCE_META }] };
        } catch (err) {
          ctx.log.error('mcp view read failed', { view: view.name, internal: describeError(err) });
          throw err;
        }
      },
    );
  }
}
