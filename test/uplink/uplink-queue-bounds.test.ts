import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { MIN_PROBE_ROUNDS, STALL_BOUND_MS } from '../support/bystander-probe.js';
import { TestCsms } from '../support/csms.js';
import { CP001, CP002, eventually, PROCESS_TEST_TIMEOUT_MS, type TestDaemon } from '../support/daemon.js';
import { bystanderProbeForTest } from '../support/for-test.js';
import { simulatedRecord } from '../support/ocmf.js';
import type { SimulatedStation } from '../support/station.js';
import { linkedSite, transactionMessages16, UPLINK_WAIT_MS, upstreamHealth } from '../support/uplink.js';

const READING_BYTES = 59 * 1024;
const VOLTAGE = { value: '230.1', measurand: 'Voltage', phase: 'L1-N', unit: 'V', context: 'Sample.Clock' };

/** The bytes of every file under the data dir (the database, its WAL and the rest). */
function bytesUnder(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
    const file = path.join(dir, entry.name);
    return sum + (entry.isDirectory() ? bytesUnder(file) : statSync(file).size);
  }, 0);
}

/**
 * A data dir in memory (/dev/shm) where there is one: the flood's 1,500 commits each wait for an fsync on a disk
 * (7 ms each on a loaded one, most of the case's time), which is not what the case is about; the bytes the data dir
 * grows and the bystanders' answers are.
 */
function dataDirInMemory(): string {
  const dir = mkdtempSync(path.join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'chargegate-queue-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'var');
}

/** A clock-aligned MeterValues of the transaction of about READING_BYTES: a meter reporting every phase's voltage. */
function clockReading(station: SimulatedStation, transactionId: number, n: number): Promise<unknown> {
  const samples = Math.floor(READING_BYTES / (JSON.stringify(VOLTAGE).length + 1));
  return station.call('MeterValues', {
    connectorId: 1,
    transactionId,
    meterValue: [
      {
        timestamp: new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString(),
        sampledValue: Array.from({ length: samples }, () => VOLTAGE),
      },
    ],
  });
}

/** What the uplink dropped of CP001's messages, from the `upstream` part of /health. */
function cp001Dropped(upstream: Record<string, unknown>): number | undefined {
  return (upstream.stations as Array<{ stationId: string; dropped: number }>).find((s) => s.stationId === 'CP001')
    ?.dropped;
}

/** The station's queue as written: rows and their payloads' bytes. */
function queued(t: TestDaemon): { rows: number; bytes: number } {
  return t.db
    .prepare(
      "SELECT COUNT(*) AS rows, COALESCE(SUM(LENGTH(CAST(payload AS BLOB))), 0) AS bytes FROM uplink_queue WHERE station_id = 'CP001'",
    )
    .get() as { rows: number; bytes: number };
}

/** While the CSMS is away: a transaction with signed Begin and End readings around `readings` clock-aligned ones. */
async function sessionWithClockReadings(t: TestDaemon, station: SimulatedStation, readings: number): Promise<void> {
  const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG-CLOCK', meterStart: 0 });
  await station.signedMeterValue({ connectorId: 1, transactionId, value: simulatedRecord(0, 'B') });
  for (let n = 0; n < readings; n += 1) await clockReading(station, transactionId, n);
  await station.signedMeterValue({
    connectorId: 1,
    transactionId,
    value: simulatedRecord(1, 'E'),
    context: 'Transaction.End',
  });
  await station.stopTransaction({ transactionId, meterStop: 1000 });
}

/**
 * What the CSMS received of the session, in order: the action, the context of a reading (a clock-aligned one with
 * its number).
 */
function receivedSession(csms: TestCsms): string[] {
  return transactionMessages16(csms).map(({ action, params }) => {
    if (action !== 'MeterValues') return action;
    const { timestamp, sampledValue } = (
      params.meterValue as Array<{
        timestamp: string;
        sampledValue: Array<{ context: string }>;
      }>
    )[0]!;
    const { context } = sampledValue[0]!;
    return context === 'Sample.Clock' ? `clock ${(Date.parse(timestamp) - Date.UTC(2026, 0, 1)) / 60_000}` : context;
  });
}

/** The session as the CSMS must receive it: the last `kept` of `readings` clock-aligned readings, all the rest. */
function sessionKeeping(readings: number, kept: number): string[] {
  const clock = Array.from({ length: kept }, (_, i) => `clock ${readings - kept + i}`);
  return ['StartTransaction', 'Transaction.Begin', ...clock, 'Transaction.End', 'StopTransaction'];
}

describe('the uplink queue, bounded in messages and bytes (docs/design/uplink.md#uplink-what-the-csms-sees)', () => {
  it(
    '1,500 clock-aligned readings of 59 KB while the CSMS is away, queueLimit 100: the queue stays at 100 with the start, stop and signed readings; the data dir grows < 20 MB; another station and /health answer within 1 s',
    async () => {
      const csms = await TestCsms.startForTest();
      const dataDir = dataDirInMemory();
      const { t, station } = await linkedSite(csms, { queueLimit: 100 }, [CP001, CP002], { dataDir });
      await eventually(() => csms.of('BootNotification').length > 0, UPLINK_WAIT_MS, 'the uplink boot');
      await csms.cutOff();
      // The daemon runs in this process: the probe's answers wait for the test's sending too (a stricter bound).
      const bystander = await bystanderProbeForTest({ httpPort: t.daemon.httpPort, ocppUrl: t.url, identity: 'CP002' });
      const before = bytesUnder(dataDir);
      await sessionWithClockReadings(t, station, 1500);
      const { slowestHealthMs, slowestHeartbeatMs, samples } = await bystander.stop();
      expect(samples).toBeGreaterThanOrEqual(MIN_PROBE_ROUNDS);
      expect(slowestHeartbeatMs).toBeLessThan(STALL_BOUND_MS);
      expect(slowestHealthMs).toBeLessThan(STALL_BOUND_MS);
      const grown = bytesUnder(dataDir) - before;
      expect(grown, `the data dir grew ${grown} bytes`).toBeLessThan(20 * 1024 * 1024);
      expect(queued(t).rows).toBe(100);

      csms.restore();
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the replay');
      // The newest 96 clock-aligned readings, the start, the stop and both signed readings: nothing else was dropped.
      expect(receivedSession(csms)).toEqual(sessionKeeping(1500, 96));
      await eventually(
        async () => cp001Dropped(await upstreamHealth(t.daemon.httpPort)),
        UPLINK_WAIT_MS,
        'the drops counted',
      );
      expect(cp001Dropped(await upstreamHealth(t.daemon.httpPort))).toBe(1500 - 96);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'past queueBytesLimit the oldest droppable readings go until the queue fits; the start, stop and signed readings stay',
    async () => {
      const csms = await TestCsms.startForTest();
      const limit = 1024 * 1024;
      const { t, station } = await linkedSite(csms, { queueBytesLimit: limit });
      await eventually(() => csms.of('BootNotification').length > 0, UPLINK_WAIT_MS, 'the uplink boot');
      await csms.cutOff();
      await sessionWithClockReadings(t, station, 40);
      const { rows, bytes } = queued(t);
      // Full, not emptied: what is left fits, one reading more would not.
      expect(bytes).toBeLessThanOrEqual(limit);
      expect(bytes).toBeGreaterThan(limit - 2 * READING_BYTES);
      // Full to its bytes: the next reading drops one, as at queueLimit.
      expect(await upstreamHealth(t.daemon.httpPort)).toMatchObject({
        status: 'critical',
        stations: [expect.objectContaining({ stationId: 'CP001', level: 'critical' })],
      });
      csms.restore();
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the replay');
      expect(receivedSession(csms)).toEqual(sessionKeeping(40, rows - 4));
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
