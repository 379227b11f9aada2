import type { Logger } from '../log/index.js';
import { statement } from './statement-cache.js';
import type { Writer } from './writer.js';

/** What one pruning pass removed, by what it counts (deliveries, events, stopped transactions...). */
export type Pruned = Record<string, number>;

/**
 * Runs a `DELETE ... LIMIT ?` statement whose parameters are (cutoff, limit) until it deletes fewer than a batch,
 * each batch its own commit: the write lock is never held long against stations waiting for their answers.
 */
export function deleteInBatches(writer: Writer, sql: string, cutoff: string, batchSize: number): number {
  const remove = statement(writer.db, sql);
  let total = 0;
  for (;;) {
    const { changes } = writer.writeNow(() => remove.run(cutoff, batchSize));
    total += changes;
    if (changes < batchSize) return total;
  }
}

/** Frees the pages pruning emptied: the database file shrinks (auto_vacuum=INCREMENTAL, see openDatabase). */
export function reclaimFreePages(writer: Writer): void {
  writer.writeNow(() => writer.db.exec('PRAGMA incremental_vacuum'));
}

/**
 * Runs prune a minute after start, then hourly, and gives the freed pages back to the file system after a pass that
 * removed anything: every table stays bounded on a gateway left alone for years. Returns a stop function.
 */
export function schedulePruning(options: { writer: Writer; prune: () => Pruned; logger: Logger }): () => void {
  const { writer, logger } = options;
  const pass = (): void => {
    try {
      const pruned = options.prune();
      if (!Object.values(pruned).some((n) => n > 0)) return;
      reclaimFreePages(writer);
      logger.info({ pruned }, 'pruned rows past their retention');
    } catch (err) {
      logger.error({ err }, 'pruning rows past their retention failed; tried again in an hour');
    }
  };
  const first = setTimeout(pass, 60_000).unref();
  const hourly = setInterval(pass, 3_600_000).unref();
  return () => {
    clearTimeout(first);
    clearInterval(hourly);
  };
}
