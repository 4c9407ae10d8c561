import type { Context } from 'hono';
import type { z } from 'zod';
import type { AppEnv } from '../app-env';

/** String fields of a posted form (files and repeated fields ignored). */
export async function readForm(c: Context<AppEnv>): Promise<Record<string, string>> {
  const body = await c.req.parseBody();
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** "Label: message" for the first problem of a form, naming the field as the page labels it. */
export function firstFormError(error: z.ZodError, labels: Readonly<Record<string, string>>): { field: string; message: string } {
  const first = error.issues[0];
  const field = first ? String(first.path[0] ?? '') : '';
  return { field, message: `${labels[field] ?? 'Form'}: ${first?.message ?? 'invalid'}` };
}
