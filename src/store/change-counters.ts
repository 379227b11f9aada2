import type { Database } from './database.js';

/**
 * Cross-process change notification through the shared database: a CLI command bumps a topic after writing,
 * and the daemon polls the versions cheaply to refresh what it caches.
 */
export function bumpChangeCounter(db: Database, topic: string): void {
  db.prepare(
    'INSERT INTO change_counters (topic, version) VALUES (?, 1) ON CONFLICT (topic) DO UPDATE SET version = version + 1',
  ).run(topic);
}

export function readChangeCounter(db: Database, topic: string): number {
  const row = db
    .prepare<[string], { version: number }>('SELECT version FROM change_counters WHERE topic = ?')
    .get(topic);
  return row?.version ?? 0;
}

/** Calls onChange whenever the topic's counter moves; returns a function that stops watching. */
export function watchChangeCounter(db: Database, topic: string, onChange: () => void, intervalMs = 1000): () => void {
  let seen = readChangeCounter(db, topic);
  const timer = setInterval(() => {
    const now = readChangeCounter(db, topic);
    if (now !== seen) {
      seen = now;
      onChange();
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
