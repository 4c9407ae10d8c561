import { z } from 'zod';
import type { Statement } from '../memories/store';

type Literal = Statement['params'][number];

/**
 * Collects the values of one statement: `p(value)` appends it and returns its `?N` placeholder, so a statement is
 * written in order without counting.
 */
export class Params {
  readonly values: Literal[] = [];
  p(value: Literal | undefined): string {
    this.values.push(value ?? null);
    return `?${this.values.length}`;
  }
}

const DAY = 24 * 60 * 60 * 1000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The filters the inbox and the history share: first and last day (UTC, inclusive) and the keyset page cursor. */
export const PeriodFilterFields = {
  from: z.string().regex(DATE, 'from must be a date YYYY-MM-DD').optional(),
  to: z.string().regex(DATE, 'to must be a date YYYY-MM-DD').optional(),
  /** Rows strictly older than `createdAt:id`. */
  before: z
    .string()
    .regex(/^\d+:[A-Za-z0-9_-]+$/, 'before must be a cursor from the page')
    .optional(),
};

/** Parses filters from a query string or CLI flags; empty values (a form submits every field) mean "any". */
export function parseFilter<S extends z.ZodType>(schema: S, raw: Record<string, string | undefined>): ReturnType<S['safeParse']> {
  const present = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && v.trim() !== ''));
  return schema.safeParse(present) as ReturnType<S['safeParse']>;
}

/** Conditions of the shared filters on row `alias` (`created_at`, `id`). */
export function periodFilterSql(alias: string, f: { from?: string; to?: string; before?: string }, params: Params): string[] {
  const where: string[] = [];
  if (f.from) where.push(`${alias}.created_at >= ${params.p(Date.parse(`${f.from}T00:00:00Z`))}`);
  if (f.to) where.push(`${alias}.created_at < ${params.p(Date.parse(`${f.to}T00:00:00Z`) + DAY)}`);
  if (f.before) {
    const [at, id] = f.before.split(':') as [string, string];
    const atParam = params.p(Number(at));
    where.push(`(${alias}.created_at < ${atParam} OR (${alias}.created_at = ${atParam} AND ${alias}.id < ${params.p(id)}))`);
  }
  return where;
}
