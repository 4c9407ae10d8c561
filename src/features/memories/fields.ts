import { z } from 'zod';
import { TABLE_NAME_RE } from '../../catalog/table-name';
import { nameProblem, textProblem } from '../../lib/text';
import { MEMORY_LIMITS, utf8Bytes } from './rules';

/**
 * The fields of a memory as every writer checks them (REST and MCP bodies, the admin pages' form, the admin CLI), so
 * all refuse the same input with the same message. Plain zod, so the Node CLI can bundle it without the OpenAPI layer.
 */

export const TableNameSchema = z
  .string()
  .max(MEMORY_LIMITS.tableChars, { error: `table must be at most ${MEMORY_LIMITS.tableChars} characters` })
  .regex(TABLE_NAME_RE, {
    error: "table must be a table name of the brand's dataset, e.g. fact__orders (letters, digits, _; not service-v1.<dataset>.<table>)",
  });

export const TitleSchema = z
  .string()
  .trim()
  .min(1, { error: 'title must not be empty' })
  .max(MEMORY_LIMITS.titleChars, { error: `title must be at most ${MEMORY_LIMITS.titleChars} characters` })
  .superRefine((s, ctx) => {
    const problem = nameProblem(s);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: `title ${problem}` });
  });

export const ContentSchema = z
  .string()
  .refine((s) => s.trim().length > 0, { error: 'content must not be empty' })
  .superRefine((s, ctx) => {
    const problem = textProblem(s);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: `content ${problem}` });
  })
  .refine((s) => utf8Bytes(s) <= MEMORY_LIMITS.contentBytes, {
    error: (issue) =>
      `content must be at most ${MEMORY_LIMITS.contentBytes} bytes of UTF-8, got ` +
      `${typeof issue.input === 'string' ? utf8Bytes(issue.input) : '?'}; shorten it or split it into several memories`,
  });

/** The changeable fields; at least one. */
export const MemoryFieldsSchema = z
  .strictObject({
    title: TitleSchema.optional().describe(`New title, 1 to ${MEMORY_LIMITS.titleChars} characters.`),
    content: ContentSchema.optional().describe(`New markdown content, at most ${MEMORY_LIMITS.contentBytes} bytes of UTF-8.`),
    table: TableNameSchema.nullable().optional().describe("New table of the brand's dataset, or null to make the memory general context."),
  })
  .refine((b) => b.title !== undefined || b.content !== undefined || b.table !== undefined, {
    error: 'send at least one of title, content, table',
  });
