import { env } from 'cloudflare:test';
import schema from '../schema.sql?raw';

/** Splits schema.sql into statements (it has no semicolons inside literals or triggers). */
function statements(sql: string): string[] {
  return sql
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('--'))
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}

await env.DB.batch(statements(schema).map((s) => env.DB.prepare(s)));
