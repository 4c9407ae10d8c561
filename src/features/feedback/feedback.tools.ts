import type { McpServer } from '@modelcontextprotocol/server';
import { submitFeedback } from './feedback';
import { FeedbackRequestSchema, FeedbackResponseSchema } from './feedback.schemas';
import { runTool, toolInput, toolSchema, toolSuccess, type ToolDeps } from '../../mcp/tool-result';

const fields = FeedbackRequestSchema.shape;

const ReportDataIssueInput = toolInput({
  summary: fields.summary,
  brandId: fields.brandId.describe('Omit only for an organization-wide issue.'),
  expected: fields.expected.describe('e.g. "May revenue about 1.2M".'),
  observed: fields.observed.describe('e.g. "May revenue 2.4M, twice April".'),
  severity: fields.severity,
  transcript: fields.transcript.describe('The turns that led here, verbatim; tool turns without their rows.'),
});

export function registerFeedbackTools(server: McpServer, { ctx }: ToolDeps) {
  server.registerTool(
    'report_data_issue',
    {
      title: 'Report a data issue',
      // One rule for what goes in: the queries are attached, so no result rows anywhere (not in transcript either).
      description:
        'File a data issue when numbers look wrong (flow C), once per issue and only when the user agrees. Recent ' +
        'queries are attached, so never paste result rows: say what looks wrong in summary, expected and observed.',
      inputSchema: ReportDataIssueInput,
      outputSchema: toolSchema(FeedbackResponseSchema),
      // Writes a new report each call: not read-only, not idempotent, but never destroys anything.
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (input) => runTool(ctx, 'report_data_issue', async () => toolSuccess(FeedbackResponseSchema, await submitFeedback(ctx, input))),
  );
}
