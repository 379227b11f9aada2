import { beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { DeliveryWrite } from '../../src/webhooks/delivery-writes.js';
import { WriteBatch } from '../../src/webhooks/delivery-thread/write-batch.js';

/** Fake setTimeout for the linger; real setImmediate, whose turns turns() gives without moving the clock. */
async function turns(count = 5): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

const reported = (id: number): DeliveryWrite => ({ op: 'reported', ids: [id] });

describe('WriteBatch (fake timers)', () => {
  let sent: Array<{ batch: number; writes: DeliveryWrite[] }>;
  let batches: WriteBatch;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    sent = [];
  });
  const make = (lingerMs: number) =>
    (batches = new WriteBatch((batch, writes) => sent.push({ batch, writes: [...writes] }), lingerMs));

  it('writes someone waits for go at the end of the turn, in one batch, and each waiter gets its own results', async () => {
    make(20);
    const first = batches.run([reported(1), reported(2)]);
    const second = batches.run([reported(3)]);
    expect(sent).toEqual([]);
    await turns();
    expect(sent).toEqual([{ batch: 1, writes: [reported(1), reported(2), reported(3)] }]);
    batches.settle(1, { results: [true, false, true] });
    expect(await first).toEqual([true, false]);
    expect(await second).toEqual([true]);
  });

  it('outcomes nobody waits for linger for company, up to lingerMs; a run() or flushed() sends them sooner', async () => {
    make(20);
    void batches.queue(reported(1));
    await turns();
    await vi.advanceTimersByTimeAsync(19);
    expect(sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.map((s) => s.writes)).toEqual([[reported(1)]]);

    void batches.queue(reported(2));
    const flushed = batches.flushed();
    await turns();
    expect(sent.map((s) => s.writes)).toEqual([[reported(1)], [reported(2)]]);
    batches.settle(1, { results: [true] });
    batches.settle(2, { results: [true] });
    await flushed;
  });

  it('a batch the daemon could not record rejects its waiters with the reason; later batches go on', async () => {
    make(0);
    const refused = batches.run([reported(1)]);
    await turns();
    batches.settle(1, { error: 'database or disk is full' });
    await expect(refused).rejects.toThrow('delivery writes not recorded: database or disk is full');
    const next = batches.run([reported(2)]);
    await turns();
    batches.settle(2, { results: [true] });
    expect(await next).toEqual([true]);
    expect(sent.map((s) => s.batch)).toEqual([1, 2]);
  });
});
