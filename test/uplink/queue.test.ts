import { describe, expect, it, onTestFinished } from 'vitest';
import { OCPP16 } from '../../src/ocpp/rpc.js';
import { GroupCommit } from '../../src/store/index.js';
import { isDroppableReading, isDroppableTransactionEvent } from '../../src/uplink/periodic-readings.js';
import { UplinkQueue, type QueueLimits } from '../../src/uplink/queue.js';
import { capturedLogger } from '../support/captured-log.js';
import { databasePerTest } from '../support/temp-database.js';

/*
 * The uplink's queue on its own (docs/design/uplink.md#uplink-what-the-csms-sees), on a real SQLite file: what it keeps past its limits in
 * messages and bytes, and what it never drops.
 */

const store = databasePerTest();

function queueOf(limits: QueueLimits): { queue: UplinkQueue; writer: GroupCommit } {
  const writer = new GroupCommit(store.db);
  const queue = new UplinkQueue(
    writer,
    () => limits,
    () => undefined,
    capturedLogger().logger,
  );
  onTestFinished(() => queue.flush());
  return { queue, writer };
}

const reading = (context: string, value = '1', extra: object = {}) => ({
  connectorId: 1,
  transactionId: 1,
  meterValue: [{ timestamp: '2026-01-01T00:00:00Z', sampledValue: [{ value, context, ...extra }] }],
});

/** Appends one message to CP001's queue and waits for its commit; returns its payload's bytes. */
async function append(
  { queue, writer }: { queue: UplinkQueue; writer: GroupCommit },
  action: string,
  payload: object,
): Promise<number> {
  writer.write(() => queue.append('CP001', OCPP16, { action, payload, transactionId: 1 }, new Date()));
  await writer.committed();
  return Buffer.byteLength(JSON.stringify(payload));
}

/** The values of CP001's queued rows, in order: a reading's first sample, else the action. */
function rows(): string[] {
  return (
    store.db.prepare("SELECT action, payload FROM uplink_queue WHERE station_id = 'CP001' ORDER BY id").all() as Array<{
      action: string;
      payload: string;
    }>
  ).map(({ action, payload }) => {
    const sample = (JSON.parse(payload) as ReturnType<typeof reading>).meterValue?.[0]?.sampledValue[0];
    return sample ? `${sample.context} ${sample.value}` : action;
  });
}

describe('UplinkQueue, alone on a real database', () => {
  it('past queueLimit the oldest routine reading goes (periodic or clock-aligned); starts, stops, signed and triggered readings stay', async () => {
    const q = queueOf({ messages: 4, bytes: 1024 * 1024 });
    await append(q, 'StartTransaction', {
      connectorId: 1,
      idTag: 'T',
      meterStart: 0,
      timestamp: '2026-01-01T00:00:00Z',
    });
    await append(q, 'MeterValues', reading('Sample.Clock', '1'));
    await append(q, 'MeterValues', reading('Transaction.Begin', '2', { format: 'SignedData' }));
    await append(q, 'MeterValues', reading('Sample.Periodic', '3'));
    await append(q, 'MeterValues', reading('Trigger', '4'));
    expect(rows()).toEqual(['StartTransaction', 'Transaction.Begin 2', 'Sample.Periodic 3', 'Trigger 4']);
    await append(q, 'StopTransaction', { transactionId: 1, meterStop: 5, timestamp: '2026-01-01T00:10:00Z' });
    expect(rows()).toEqual(['StartTransaction', 'Transaction.Begin 2', 'Trigger 4', 'StopTransaction']);
    // Nothing routine left: a new routine reading is the one that goes; anything else stays beyond the limit.
    await append(q, 'MeterValues', reading('Sample.Clock', '6'));
    await append(q, 'MeterValues', reading('Transaction.End', '7', { format: 'SignedData' }));
    expect(rows()).toEqual([
      'StartTransaction',
      'Transaction.Begin 2',
      'Trigger 4',
      'StopTransaction',
      'Transaction.End 7',
    ]);
    expect(q.queue.droppedCounts().get('CP001')).toBe(3);
  });

  it('past queueBytesLimit as many of the oldest routine readings go as it takes to fit', async () => {
    const q = queueOf({ messages: 1000, bytes: 10_000 });
    const big = (n: number) => reading('Sample.Clock', String(n).padStart(3000, '0'));
    let bytes = 0;
    for (let n = 1; n <= 3; n += 1) bytes += await append(q, 'MeterValues', big(n));
    expect(bytes).toBeLessThan(10_000);
    expect(rows()).toHaveLength(3);
    const huge = reading('Sample.Periodic', '9'.repeat(6500));
    await append(q, 'MeterValues', huge);
    // 6.5 KB more: two readings of 3 KB go, the newest stays beside it.
    expect(rows().map((r) => r.slice(0, 14))).toEqual(['Sample.Clock 0', 'Sample.Periodi']);
    expect(rows()[0]!.endsWith('3')).toBe(true);
    expect(q.queue.droppedCounts().get('CP001')).toBe(2);
  });

  it('never drops the row being sent nor one answered: the next routine one goes', async () => {
    const q = queueOf({ messages: 2, bytes: 1024 * 1024 });
    await append(q, 'MeterValues', reading('Sample.Periodic', '1'));
    await append(q, 'MeterValues', reading('Sample.Periodic', '2'));
    const first = q.queue.next('CP001', 0)!;
    q.queue.acknowledge('CP001', first);
    const second = q.queue.next('CP001', first.id)!;
    let release = (): void => undefined;
    const sending = q.queue.whileSending('CP001', second.id, () => new Promise<void>((r) => (release = r)));
    await append(q, 'MeterValues', reading('Sample.Periodic', '3'));
    await append(q, 'MeterValues', reading('Sample.Periodic', '4'));
    expect(rows()).toEqual(['Sample.Periodic 1', 'Sample.Periodic 2', 'Sample.Periodic 4']);
    release();
    await sending;
  });

  it('the sizes are read again at start: a restarted queue holds the same limits over what was written', async () => {
    const before = queueOf({ messages: 1000, bytes: 10_000 });
    for (let n = 1; n <= 3; n += 1)
      await append(before, 'MeterValues', reading('Sample.Clock', String(n).padStart(3000, '0')));
    const after = queueOf({ messages: 1000, bytes: 10_000 });
    await append(after, 'MeterValues', reading('Sample.Clock', '4'.padStart(3000, '0')));
    expect(rows().map((r) => r.slice(-1))).toEqual(['2', '3', '4']);
  });

  it('routine readings, 1.6 and 2.0.1: periodic and clock-aligned unsigned ones only', () => {
    expect(isDroppableReading(reading('Sample.Periodic'))).toBe(true);
    expect(isDroppableReading(reading('Sample.Clock'))).toBe(true);
    expect(isDroppableReading({ meterValue: [{ sampledValue: [{ value: '1' }] }] })).toBe(true);
    expect(isDroppableReading(reading('Sample.Clock', 'x', { format: 'SignedData' }))).toBe(false);
    expect(isDroppableReading(reading('Transaction.Begin'))).toBe(false);
    expect(isDroppableReading(reading('Trigger'))).toBe(false);
    const event = (context: string, extra: object = {}) => ({
      eventType: 'Updated',
      transactionInfo: { transactionId: 'T' },
      meterValue: [{ sampledValue: [{ value: 1, context }] }],
      ...extra,
    });
    expect(isDroppableTransactionEvent(event('Sample.Clock'))).toBe(true);
    expect(isDroppableTransactionEvent(event('Sample.Periodic'))).toBe(true);
    expect(isDroppableTransactionEvent(event('Sample.Clock', { eventType: 'Ended' }))).toBe(false);
    expect(isDroppableTransactionEvent(event('Sample.Clock', { idToken: { idToken: 'A', type: 'Central' } }))).toBe(
      false,
    );
    expect(
      isDroppableTransactionEvent(
        event('Sample.Clock', { transactionInfo: { transactionId: 'T', chargingState: 'Idle' } }),
      ),
    ).toBe(false);
  });
});
