import type { Env } from './env';
import { consumeNotifications } from './features/notifications/notifications';
import { consumeQueryLog } from './features/query/query-log';
import { createLogger } from './lib/log';

/**
 * The Worker's one Queues consumer (wrangler.toml [[queues.consumers]]): query_log rows (`kind: "query-log"`, written
 * in D1 batches) and notifications of filed reports (webhook calls). Messages are routed by their `kind`, so either
 * queue's batch is handled whatever the queues are named.
 */
export async function handleQueueBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const log = createLogger(`queue:${batch.queue}`);
  const isLogRow = (m: Message<unknown>) =>
    typeof m.body === 'object' && m.body !== null && (m.body as { kind?: unknown }).kind === 'query-log';
  const rows = batch.messages.filter(isLogRow);
  const others = batch.messages.filter((m) => !isLogRow(m));
  await Promise.all([
    rows.length ? consumeQueryLog(rows, env, log) : undefined,
    others.length ? consumeNotifications(others, env, log) : undefined,
  ]);
}
