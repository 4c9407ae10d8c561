import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { submitFeedback } from '../operations/feedback';
import { FeedbackRequestSchema, FeedbackResponseSchema } from '../schemas/feedback';
import { runTool, toolSuccess, type ToolDeps } from './tool-result';

const fields = FeedbackRequestSchema.shape;

export function registerFeedbackTools(server: McpServer, { ctx }: ToolDeps) {
  server.registerTool(
    'report_data_issue',
    {
      title: 'Report a data issue',
      description:
        'File a data-issue report for the data team when numbers look wrong, missing or inconsistent (flow C). ' +
        'The queries these credentials ran recently are attached automatically, so say what you ran and why it ' +
        'looks wrong; do not paste result rows. Returns a feedbackRef to give the user for follow-up. ' +
        'This writes a report: call it once per issue, only when the user agrees something looks wrong.',
      inputSchema: z.strictObject({
        summary: fields.summary.describe('What looks wrong, in one or two sentences (required).'),
        brandId: fields.brandId.describe(
          'Brand the issue is about (brandId from list_brands). With organization credentials omit it only for an organization-wide issue.',
        ),
        expected: fields.expected.describe('The value or behaviour expected, e.g. "May revenue about 1.2M".'),
        observed: fields.observed.describe('The value that looked off, e.g. "May revenue 2.4M, twice April".'),
        severity: fields.severity.describe('How much this blocks the user: low, medium or high.'),
        transcript: fields.transcript.describe(
          'The relevant conversation turns, verbatim and in order: [{ role: user | assistant | tool, content }].',
        ),
      }),
      outputSchema: FeedbackResponseSchema,
      // Writes a new report each call: not read-only, not idempotent, but never destroys anything.
      annotations: { title: 'Report a data issue', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (input) => runTool(ctx, 'report_data_issue', async () => toolSuccess(FeedbackResponseSchema, await submitFeedback(ctx, input))),
  );
}
