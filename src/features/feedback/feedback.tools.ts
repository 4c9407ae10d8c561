import { getFeedback, submitFeedback } from './feedback';
import {
  FeedbackRefField,
  FeedbackRequestSchema,
  FeedbackResponseSchema,
  FeedbackStatusSchema,
  type FeedbackResponse,
} from './feedback.schemas';
import { ANNOTATIONS, defineTool } from '../../mcp/define-tool';

const fields = FeedbackRequestSchema.shape;

/** What was filed and what the data team will see with it: the attached runs by request id and time, and the turns. */
function filedText({ feedbackRef, attached }: FeedbackResponse): string {
  const runs = attached?.queries ?? [];
  const turns = attached?.turns ?? 0;
  return [
    `Filed ${feedbackRef} (quote it in support). Attached: ${runs.length} recent quer${runs.length === 1 ? 'y' : 'ies'} ` +
      `and ${turns} transcript turn${turns === 1 ? '' : 's'}.`,
    ...runs.map((r) => `- ${r.requestId} at ${r.at}: ${r.queryId ?? 'raw SQL'}, ${r.outcome}`),
  ].join('\n');
}

export const reportDataIssueTool = defineTool({
  name: 'report_data_issue',
  title: 'Report a data issue',
  // One rule for what goes in: the queries are attached, so no result rows anywhere (not in transcript either).
  description:
    'File a data issue when numbers look wrong (flow C), once per issue and only when the user agrees. Recent ' +
    'queries are attached, so never paste result rows: say what looks wrong in summary, expected and observed.',
  input: {
    summary: fields.summary,
    brandId: fields.brandId.describe('Omit only for an organization-wide issue.'),
    expected: fields.expected.describe('e.g. "May revenue about 1.2M".'),
    observed: fields.observed.describe('e.g. "May revenue 2.4M, twice April".'),
    severity: fields.severity,
    transcript: fields.transcript.describe('The turns that led here, verbatim; tool turns without their rows.'),
  },
  output: FeedbackResponseSchema,
  text: filedText,
  // Writes a new report each call: not read-only, not idempotent, but never destroys anything.
  annotations: ANNOTATIONS.append,
  writes: 'a feedback row',
  run: (input, { ctx }) => submitFeedback(ctx, input),
});

export const getDataIssueTool = defineTool({
  name: 'get_data_issue',
  title: 'Check a data issue',
  description:
    "Status and the data team's notes of an issue these credentials filed (report_data_issue's feedbackRef), e.g. " +
    'when the user asks whether it was fixed.',
  input: { feedbackRef: FeedbackRefField },
  output: FeedbackStatusSchema,
  text: (r) =>
    [
      `${r.feedbackRef} is ${r.status}${r.assigned ? ' (assigned)' : ''}: ${r.summary}`,
      ...r.updates.map((u) => `- ${u.at}: ${u.kind === 'status' ? `${u.from} -> ${u.to}` : 'note'}${u.note ? `: ${u.note}` : ''}`),
    ].join('\n'),
  annotations: ANNOTATIONS.read,
  run: (input, { ctx }) => getFeedback(ctx, input.feedbackRef),
});
