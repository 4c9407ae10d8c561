import { z } from 'zod';
import { ApiError, errorBody, isErrorCode, toApiError } from '../../errors';
import type { OpContext } from '../../context';
import { isLive, jobLimits, runningJobs, tooManyRunning, type JobRow } from '../query-jobs/job-store';
import { jobError, jobResult, startLongQuery, type LongAnswer } from '../query-jobs/long-run';
import { taskWaitMs } from '../query-jobs/query-jobs.tasks';
import { issueReportHandle, reportTaskSource, reportTaskState, type ReportHandle } from './report-tasks';
import { getReport, listReportQueries } from './reports';
import { runQuery } from '../query/run-query';
import { QuerySchema, ReportDetailSchema } from '../../schemas/catalog';
import { BrandIdField, ReportIdField } from '../../schemas/fields';
import { PeriodSchema } from '../query/run-query.input';
import { ResolvedWindowSchema, RunQueryResponseSchema, type RunQueryResponse } from '../query/run-query.schemas';
import { RESULT_ENVELOPE_CHARS } from '../query/query.tools';
import { resultCaps, rowArray, rowsThatFit } from '../query/result-text';
import { resultSizeMeta } from '../../mcp/tool-result';
import { ANNOTATIONS, defineTool, taskReply, toolReply } from '../../mcp/define-tool';
import { viewMeta, VIEWS } from '../../mcp/views';

/** A section as show_report returns it: what list_report_queries says about it, then its rows, or why it has none. */
const ShownSection = QuerySchema.pick({ id: true, name: true, description: true, chartSpec: true, narrativeHints: true }).extend(
  RunQueryResponseSchema.pick({ rows: true, rowCount: true, truncated: true, schema: true, totalRows: true, nextCursor: true })
    .partial()
    .extend({
      error: z
        .object({ code: z.string(), message: z.string(), requestId: z.string() })
        .optional()
        .describe('Set when this section could not run (the others still did): the error run_query would have returned.'),
    }).shape,
);

export const ShowReportOutput = z.object({
  brandId: z.string().describe('The brand the sections ran against.'),
  report: ReportDetailSchema,
  window: ResolvedWindowSchema.optional().describe('The date window the parameterized sections ran with.'),
  sections: z
    .array(ShownSection)
    .describe("Every section in the report's order with its rows, capped like run_query (page one with run_query { cursor })."),
});
export type ShowReportOutput = z.infer<typeof ShowReportOutput>;
type ShownSection = z.infer<typeof ShownSection>;

/** The `_meta` key of what only the report view needs: the dashboard layout and each section's chart. */
export const REPORT_VIEW_META = 'warehouse/report-view';

/**
 * The model's copy of a dashboard, sent once as the text block: the report's words (name, description,
 * instructions), the window, and each section's rows as arrays under its schema (as run_query's result). The
 * layout and chart specs are for the view only, so they travel in the result's `_meta` instead.
 */
function compactReport(data: ShowReportOutput) {
  const { dashboardConfig: _layout, ...report } = data.report;
  return {
    brandId: data.brandId,
    report,
    ...(data.window ? { window: data.window } : {}),
    sections: data.sections.map(({ chartSpec: _chart, rows, schema, ...section }) => {
      if (rows === undefined) return section;
      const columns = (schema ?? []).map((f) => f.name);
      return { ...section, schema, rows: rows.map((r) => rowArray(columns.length > 0 ? columns : Object.keys(r), r)) };
    }),
  };
}

function viewOnly(data: ShowReportOutput): Record<string, unknown> {
  const charts = Object.fromEntries(
    data.sections.flatMap((s) => (s.chartSpec === undefined || s.chartSpec === null ? [] : [[s.id, s.chartSpec]])),
  );
  return { [REPORT_VIEW_META]: { dashboardConfig: data.report.dashboardConfig, chartSpecs: charts } };
}

type Period = z.infer<typeof PeriodSchema>;
type SectionAbout = Pick<ShownSection, 'id' | 'name' | 'description' | 'chartSpec' | 'narrativeHints'>;
type ReportQuery = Awaited<ReturnType<typeof listReportQueries>>['queries'][number];

const aboutOf = (q: ReportQuery): SectionAbout => ({
  id: q.id,
  name: q.name,
  description: q.description,
  chartSpec: q.chartSpec,
  narrativeHints: q.narrativeHints,
});

/** A section from its run's result, or from the error its run ended with (logged; the other sections still show). */
function shownSection(ctx: OpContext, about: SectionAbout, ran: { result: RunQueryResponse } | { error: unknown; requestId?: string }) {
  if ('result' in ran) {
    const { rows, rowCount, truncated, schema, totalRows, nextCursor } = ran.result;
    return {
      section: { ...about, rows, rowCount, truncated, schema, totalRows, nextCursor } satisfies ShownSection,
      window: ran.result.window,
    };
  }
  const apiErr = toApiError(ran.error);
  ctx.log[apiErr.status >= 500 ? 'error' : 'info']('show_report section failed', { section: about.id, code: apiErr.code });
  return {
    section: { ...about, error: errorBody(apiErr, ran.requestId ?? ctx.requestId).error } satisfies ShownSection,
    window: undefined,
  };
}

/** The report's sections in order, and the run options that share one result's byte budget among them. */
async function reportSections(ctx: OpContext, reportId: string, brandId: string | undefined) {
  const caps = resultCaps(ctx.config.MCP_ROW_CAP, ctx.config.MCP_MAX_RESULT_BYTES);
  const report = await getReport(ctx, { reportId, brandId });
  const { queries } = await listReportQueries(ctx, { reportId, brandId: report.brandId });
  // The sections share one result's byte budget, so the whole dashboard stays within MCP_MAX_RESULT_BYTES.
  const share = resultCaps(caps.rows, Math.floor(caps.bytes / Math.max(1, queries.length)));
  const opts = { rowCap: caps.rows, fitRows: (rows: Record<string, unknown>[]) => rowsThatFit(rows, share) };
  const requestOf = (q: ReportQuery, period: Period | undefined) => ({
    queryId: q.id,
    brandId: report.brandId,
    ...(q.parameterized && period ? { period } : {}),
  });
  return { report, queries, opts, requestOf };
}

/** show_report's answer from its sections: the JSON text for the model, the layout for the view. */
function reportReply(report: ShowReportOutput['report'], runs: ReturnType<typeof shownSection>[]) {
  const window = runs.find((r) => r.window !== undefined)?.window;
  const data: ShowReportOutput = { brandId: report.brandId, report, ...(window ? { window } : {}), sections: runs.map((r) => r.section) };
  return toolReply(ShowReportOutput, data, { render: (d) => JSON.stringify(compactReport(d)), meta: viewOnly(data) });
}

/**
 * A client that takes 2026 tasks: every section starts as a long query (sharing one running-job slot) and waits a
 * short while; a report whose sections all ended answers as always, else it becomes one task over their jobs.
 */
async function startReportTask(ctx: OpContext, reportId: string, brandId: string | undefined, period: Period | undefined) {
  const { report, queries, opts, requestOf } = await reportSections(ctx, reportId, brandId);
  const limits = jobLimits(ctx.principal);
  if ((await runningJobs(ctx.env, ctx.principal)) >= limits.maxRunningJobs) throw tooManyRunning(limits);
  const wait = taskWaitMs('extension', ctx.config.LONG_QUERY_WAIT_MS);
  const answers = await Promise.all(
    queries.map(async (q): Promise<{ q: ReportQuery; answer: LongAnswer } | { q: ReportQuery; error: unknown }> => {
      try {
        return { q, answer: await startLongQuery(ctx, requestOf(q, period), wait, opts, { size: queries.length }) };
      } catch (error) {
        return { q, error };
      }
    }),
  );
  const jobs = answers.flatMap((a) =>
    'answer' in a ? ('pending' in a.answer ? [a.answer.pending] : a.answer.job ? [a.answer.job] : []) : [],
  );
  if (jobs.some((j) => isLive(j))) {
    const failed = answers.flatMap((a) => ('error' in a ? [[a.q.id, toApiError(a.error)] as const] : []));
    const e = Object.fromEntries(failed.map(([id, err]) => [id, [err.code, err.message.slice(0, 200)] as [string, string]]));
    const taskId = await issueReportHandle(ctx, {
      r: report.reportId,
      b: report.brandId,
      p: period ? JSON.stringify(period) : null,
      q: ctx.requestId,
      e,
    });
    return taskReply(reportTaskState(taskId, jobs, Date.now()));
  }
  const runs = answers.map((a) => {
    if ('error' in a) return shownSection(ctx, aboutOf(a.q), { error: a.error });
    if ('pending' in a.answer) throw new Error('unreachable: a live section makes a task');
    return shownSection(ctx, aboutOf(a.q), { result: a.answer.done.result });
  });
  return reportReply(report, runs);
}

/** A report task's answer once its sections ended: each section's first page read from its job's stored result. */
async function reportTaskResult(ctx: OpContext, handle: ReportHandle, jobs: JobRow[]) {
  const { report, queries, opts } = await reportSections(ctx, handle.r, handle.b);
  const runs = await Promise.all(
    queries.map(async (q) => {
      const job = jobs.find((j) => j.query_id === q.id);
      const early = handle.e[q.id];
      if (!job) {
        const error = new ApiError(early && isErrorCode(early[0]) ? early[0] : 'INTERNAL', early?.[1] ?? 'the section did not run');
        return shownSection(ctx, aboutOf(q), { error, requestId: handle.q });
      }
      try {
        if (job.status !== 'done') throw jobError(job);
        return shownSection(ctx, aboutOf(q), { result: (await jobResult(ctx, job, opts)).result });
      } catch (error) {
        return shownSection(ctx, aboutOf(q), { error, requestId: job.request_id });
      }
    }),
  );
  return reportReply(report, runs);
}

/**
 * show_report: a whole report for one period in one call, for the report view (hosts without MCP Apps get the
 * same data as JSON). Each section is one run_query of its stored query, so it is checked, metered, audited and
 * capped exactly as run_query would; a section that fails carries its error and the others still show. A client
 * that takes 2026-07-28 tasks gets a task when a section outlives a short wait (report-tasks.ts).
 */
export const showReportTool = defineTool({
  name: 'show_report',
  title: 'Show report',
  description:
    'Run every section of a report for one period and show it as a dashboard (MCP Apps hosts draw it; others ' +
    'get the data). One usage run per section; for one section, or to page one, use run_query.',
  input: {
    reportId: ReportIdField.describe('From list_reports.'),
    brandId: BrandIdField.optional().describe('As list_reports gave it.'),
    period: PeriodSchema.optional().describe("As run_query's period; omitted: the last full month."),
  },
  output: ShowReportOutput,
  // The sections' rows reach the model once, as compact JSON text; the layout goes to the view in _meta.
  result: 'text',
  // Read-only, but not idempotent: each section spends a run of the daily budget.
  annotations: ANNOTATIONS.meteredRead,
  // The sections share MCP_MAX_RESULT_BYTES, so the JSON text is about that size, like a capped run_query.
  meta: ({ ctx }) => ({ ...resultSizeMeta(ctx.config.MCP_MAX_RESULT_BYTES + RESULT_ENVELOPE_CHARS), ...viewMeta(VIEWS.report) }),
  // 2026-07-28 only: a 2025 task must be listable by tasks/list, and a report's task has no record of its own.
  tasks: { experimental: false, source: ({ ctx }) => reportTaskSource(ctx, (handle, jobs) => reportTaskResult(ctx, handle, jobs)) },
  run: async ({ reportId, brandId, period }, { ctx, task }) => {
    if (task?.era === 'extension') return startReportTask(ctx, reportId, brandId, period);
    const { report, queries, opts, requestOf } = await reportSections(ctx, reportId, brandId);
    const runs = await Promise.all(
      queries.map(async (q) => {
        try {
          return shownSection(ctx, aboutOf(q), await runQuery(ctx, requestOf(q, period), opts));
        } catch (error) {
          return shownSection(ctx, aboutOf(q), { error });
        }
      }),
    );
    return reportReply(report, runs);
  },
});
