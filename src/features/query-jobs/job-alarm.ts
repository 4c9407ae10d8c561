import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../../env';
import { alarmStep } from './long-run';

/**
 * One per long query job (named by its id): an alarm that keeps asking BigQuery how the job stands until it ends,
 * so a job whose caller never comes back is still ended, cancelled past its duration and billed. The job's state is
 * its D1 record (job-store.ts); this object only remembers which job it watches. Alarms survive deploys and restarts
 * (workerd's, and `wrangler dev`'s with its persisted state), and a failed alarm is retried by the platform.
 */
export class QueryJobAlarm extends DurableObject<Env> {
  /** Watch `jobId`, first looking at `at` (ms since epoch). */
  async watch(jobId: string, at: number): Promise<void> {
    await this.ctx.storage.put('job', jobId);
    await this.ctx.storage.setAlarm(at);
  }

  override async alarm(): Promise<void> {
    const jobId = await this.ctx.storage.get<string>('job');
    const next = jobId === undefined ? null : await alarmStep(this.env, jobId, Date.now());
    if (next === null) await this.ctx.storage.deleteAll();
    else await this.ctx.storage.setAlarm(next);
  }
}
