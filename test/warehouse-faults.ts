// The local warehouse's fault injection (docs/local-warehouse.md, "Fault injection") for a test file: each test arms
// the faults it needs, matched to its own marker or label so no other file's traffic meets them, and every fault a
// test armed is removed after it.
import { env } from 'cloudflare:test';
import { afterEach, expect } from 'vitest';
import { z } from 'zod';

/** One fault, as POST /__faults takes it. */
export interface FaultSpec {
  kind: string;
  count?: number;
  persistent?: boolean;
  ms?: number;
  status?: number;
  match: Record<string, unknown>;
}

/** Call once at a file's top level: registers the clean-up and returns what arms faults for that file's tests. */
export function warehouseFaults() {
  const armed: string[] = [];
  afterEach(async () => {
    while (armed.length) await fetch(`${env.BIGQUERY_API_BASE}/__faults/${armed.pop()}`, { method: 'DELETE' });
  });

  /** Arms `spec` until the end of the current test; its id. */
  async function arm(spec: FaultSpec): Promise<string> {
    const res = await fetch(`${env.BIGQUERY_API_BASE}/__faults`, { method: 'POST', body: JSON.stringify(spec) });
    expect(res.status).toBe(201);
    const { id } = z.object({ id: z.string() }).parse(await res.json());
    armed.push(id);
    return id;
  }

  /** Every job (not a dry run) whose SQL contains `marker` runs `ms` before it ends; `match` narrows it further. */
  function slowJob(marker: string, ms: number, match: Record<string, unknown> = {}): Promise<string> {
    return arm({ kind: 'slowJob', ms, match: { sql: marker, dryRun: false, ...match } });
  }

  return { arm, slowJob };
}
