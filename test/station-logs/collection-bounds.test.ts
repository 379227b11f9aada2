import { existsSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/index.js';
import {
  LogCollections,
  LogFiles,
  LogRecords,
  UploadGrants,
  UploadReception,
  type LogsClock,
  type UploadGrant,
} from '../../src/station-logs/index.js';
import { StationOfflineError } from '../../src/ocpp/index.js';
import { StationBusyError, type StationOperation } from '../../src/stations/index.js';
import { DirectWriter } from '../../src/store/index.js';
import { capturedLogger } from '../support/captured-log.js';
import { databasePerTest } from '../support/temp-database.js';

/**
 * The collections' bounds in time and space with an injected clock (contract 11.3): a silent station, a file the
 * station never confirms, logs.maxTotalBytes (the oldest removed first) and logs.retainDays. The station's side is
 * its answer to GetDiagnostics (Accepted) and its notifications, called as the central system would.
 */

const DAY_MS = 86_400_000;

function manualClock(start: number): LogsClock & { advance(ms: number): void } {
  let now = start;
  const timers: Array<{ at: number; run: () => void; cancelled: boolean }> = [];
  return {
    now: () => now,
    after(ms, run) {
      const timer = { at: now + ms, run, cancelled: false };
      timers.push(timer);
      return () => (timer.cancelled = true);
    },
    advance(ms) {
      now += ms;
      for (const timer of timers.filter((t) => !t.cancelled && t.at <= now)) {
        timer.cancelled = true;
        timer.run();
      }
    },
  };
}

/** An upload as the HTTP and FTP sides make one: the grant claimed, the file received, the claim released. */
async function upload(reception: UploadReception, grant: UploadGrant, body: Buffer) {
  const claim = reception.claim(grant);
  if (!claim) throw new Error(`the grant of ${grant.logId} cannot be claimed`);
  try {
    return await reception.receive(claim, 'diag.log', Readable.from([body]), 'http');
  } finally {
    claim.release();
  }
}

describe('station log collections: bounds', () => {
  const site = databasePerTest();

  function collections(logs: Partial<Config['logs']> = {}, refusal?: Error) {
    const loaded = loadConfig(site.temp.configPath);
    const config: Config = { ...loaded, logs: { ...loaded.logs, uploadWindowS: 60, ...logs } };
    const clock = manualClock(Date.parse('2026-11-29T10:00:00Z'));
    const files = new LogFiles(site.temp.dataDir);
    const grants = new UploadGrants(clock.now);
    const asked: StationOperation[] = [];
    const { logger, lines } = capturedLogger();
    const engine = new LogCollections({
      config: () => config,
      records: new LogRecords(new DirectWriter(site.db)),
      files,
      grants,
      operations: {
        run: async (stationId, _who, operation) => {
          if (refusal) throw refusal;
          asked.push(operation);
          return { answer: { stationId, action: 'GetDiagnostics', status: 'Accepted' }, succeeded: true };
        },
      },
      protocolOf: () => 'ocpp1.6',
      locations: { httpBase: () => 'http://gateway.example', ftp: () => undefined },
      logger,
      clock,
    });
    const reception = new UploadReception({
      grants,
      files,
      maxUploadBytes: () => config.logs.maxUploadBytes,
      events: engine,
      logger,
      now: clock.now,
    });
    /** The station uploads `bytes` bytes to its location, then says Uploaded. */
    const uploads = async (stationId: string, logId: string, bytes: number) => {
      await upload(reception, grants.of(logId)!, Buffer.alloc(bytes, 'x'));
      engine.statusNotification(stationId, { status: 'Uploaded' });
    };
    return { engine, clock, files, grants, reception, asked, uploads, lines };
  }

  it('fails a collection whose station sends nothing within logs.uploadWindowS, and ends its upload location', async () => {
    const { engine, clock, grants } = collections();
    const { record } = await engine.request('CP001', 'cli', {});
    expect(record.state).toBe('accepted');
    const token = grants.of(record.logId)!.http.token;
    clock.advance(59_999);
    expect(engine.get(record.logId)!.state).toBe('accepted');
    clock.advance(1);
    expect(engine.get(record.logId)).toMatchObject({
      state: 'failed',
      reason: 'nothing from the station within logs.uploadWindowS (60 s)',
    });
    expect(grants.usableToken(token)).toBeUndefined();
    expect(engine.current('CP001')).toBeNull();
  });

  it('fails, keeping the file, a collection whose file arrived but whose station never said Uploaded', async () => {
    const { engine, clock, grants, files } = collections();
    const { record } = await engine.request('CP001', 'cli', {});
    engine.statusNotification('CP001', { status: 'Uploading' });
    expect(engine.current('CP001')).toEqual({ kind: 'logs', id: record.logId, state: 'uploading' });
    const reception = new UploadReception({
      grants,
      files,
      maxUploadBytes: () => 1000,
      events: engine,
      logger: capturedLogger().logger,
      now: clock.now,
    });
    await upload(reception, grants.of(record.logId)!, Buffer.from('kept'));
    expect(engine.get(record.logId)!.state).toBe('received');
    clock.advance(60_000);
    expect(engine.get(record.logId)).toMatchObject({
      state: 'failed',
      reason: 'the file arrived, but the station did not say Uploaded within logs.uploadWindowS (60 s)',
      file: { name: 'diag.log', bytes: 4, removed: null },
    });
    expect(files.pathOf(record.logId, 'diag.log')).toBeDefined();
  });

  it('keeps all files within logs.maxTotalBytes by removing the oldest first', async () => {
    const { engine, files, uploads } = collections({ maxUploadBytes: 400, maxTotalBytes: 1000 });
    const ids: string[] = [];
    for (const [i, stationId] of ['CP001', 'CP002', 'CP003'].entries()) {
      const { record } = await engine.request(stationId, 'cli', {});
      await uploads(stationId, record.logId, 400);
      // Arrival times a second apart: which one is oldest is what the bound goes by.
      const at = new Date(Date.now() - (10 - i) * 1000);
      utimesSync(files.pathOf(record.logId, 'diag.log')!, at, at);
      ids.push(record.logId);
    }
    // 1200 bytes > 1000: the first one went when the third arrived.
    expect(engine.get(ids[0]!)).toMatchObject({
      state: 'uploaded',
      file: { removed: 'the oldest removed to keep logs.maxTotalBytes' },
    });
    expect(files.pathOf(ids[0]!, 'diag.log')).toBeUndefined();
    expect(ids.slice(1).map((id) => engine.get(id)!.file!.removed)).toEqual([null, null]);
    expect(files.list().reduce((sum, f) => sum + f.bytes, 0)).toBe(800);
  });

  it('counts every file of a folder removed for logs.maxTotalBytes, removing no other folder', async () => {
    const files = new LogFiles(site.temp.dataDir);
    const [two, one, last] = ['a1b2c3d4e5f6a7b8c9d0', 'b1b2c3d4e5f6a7b8c9d0', 'c1b2c3d4e5f6a7b8c9d0'];
    // Oldest first: two's first file, one's, two's second, the last: 1200 bytes, 600 of them in `two`.
    for (const [i, [logId, name]] of [
      [two, 'part1.log'],
      [one, 'diag.log'],
      [two, 'part2.log'],
      [last, 'diag.log'],
    ].entries()) {
      await files.receive(logId!, name!, Readable.from([Buffer.alloc(300, 'x')]), 1000);
      const at = new Date(Date.now() - (10 - i) * 1000);
      utimesSync(files.pathOf(logId!, name!)!, at, at);
    }
    expect(files.keepWithin(700, last)).toEqual([two]);
    expect(files.list().map((f) => [f.logId, f.bytes])).toEqual([
      [one, 300],
      [last, 300],
    ]);
  });

  it('logs a prune or an expiry whose write fails, and goes on serving', async () => {
    const { engine, clock, files, grants, reception, lines } = collections({ retainDays: 30 });
    const { record: cp001 } = await engine.request('CP001', 'cli', {});
    const { record: cp002 } = await engine.request('CP002', 'cli', {});
    // A file past logs.retainDays: the prune removes it and notes so in its record.
    const oldId = 'f1b2c3d4e5f6a7b8c9d0';
    await files.receive(oldId, 'old.log', Readable.from([Buffer.from('old')]), 1000);
    const old = new Date(clock.now() - 31 * DAY_MS);
    utimesSync(files.pathOf(oldId, 'old.log')!, old, old);
    // SQLite refuses every write now, as it would a full disk or a busy database.
    site.db.pragma('query_only = ON');
    expect(() => engine.prune()).not.toThrow();
    expect(() => clock.advance(60_000)).not.toThrow();
    expect(lines.filter((l) => l.level === 50).map((l) => [l.msg, l.logId])).toEqual([
      ['station logs older than logs.retainDays could not be removed; the next prune tries again', undefined],
      ['station log collection could not be ended at its window; the next start ends it', cp001.logId],
      ['station log collection could not be ended at its window; the next start ends it', cp002.logId],
    ]);
    site.db.pragma('query_only = OFF');
    // The stations may be asked again; the ended collections are failed at the next start (recover).
    const again = await engine.request('CP001', 'cli', {});
    expect(again.record.state).toBe('accepted');
    expect(engine.current('CP002')).toBeNull();
    expect(grants.of(cp002.logId)).toBeUndefined();

    // An upload whose first write ("uploading") fails leaves its token usable for the next try.
    const grant = grants.of(again.record.logId)!;
    site.db.pragma('query_only = ON');
    await expect(upload(reception, grant, Buffer.from('diagnostics'))).rejects.toThrow(/readonly/);
    site.db.pragma('query_only = OFF');
    expect(grants.usableToken(grant.http.token)).toBe(grant);
    await upload(reception, grant, Buffer.from('diagnostics'));
    expect(engine.get(again.record.logId)!.state).toBe('received');
  });

  it('removes files and records older than logs.retainDays, and writes nothing while none is', async () => {
    const { engine, clock, files, uploads } = collections({ retainDays: 30 });
    const { record } = await engine.request('CP001', 'cli', {});
    await uploads('CP001', record.logId, 10);
    const folder = path.join(files.root, record.logId);
    const changes = () => site.db.prepare('SELECT total_changes()').pluck().get() as number;

    clock.advance(29 * DAY_MS);
    const before = changes();
    engine.prune();
    expect(changes()).toBe(before);
    expect(existsSync(folder)).toBe(true);

    // The file's age is its arrival (mtime); the clock is moved past 30 days from it.
    clock.advance(2 * DAY_MS);
    const at = new Date(clock.now() - 31 * DAY_MS);
    utimesSync(path.join(folder, 'diag.log'), at, at);
    engine.prune();
    expect(existsSync(folder)).toBe(false);
    expect(engine.get(record.logId)).toBeUndefined();
  });

  it('ignores a notification naming another request, and fails what a restart left open', async () => {
    const first = collections();
    const { record } = await first.engine.request('CP001', 'cli', {});
    first.engine.statusNotification('CP001', { status: 'UploadFailure', requestId: record.requestId + 1 });
    expect(first.engine.get(record.logId)!.state).toBe('accepted');

    // The next daemon start: the upload location lived in the memory of the one that stopped.
    const next = collections();
    next.engine.recover();
    expect(next.engine.get(record.logId)).toMatchObject({
      state: 'failed',
      reason: 'chargegate restarted before the upload ended',
    });
    first.engine.stop();
  });

  it('keeps no record of a collection refused before the station was asked, and fails one the station missed', async () => {
    const busy = collections({}, new StationBusyError('CP001', 16));
    await expect(busy.engine.request('CP001', 'cli', {})).rejects.toThrow(/busy/);
    expect(site.db.prepare('SELECT count(*) FROM station_logs').pluck().get()).toBe(0);
    expect(busy.engine.current('CP001')).toBeNull();

    const offline = collections({}, new StationOfflineError('CP001'));
    await expect(offline.engine.request('CP001', 'cli', {})).rejects.toThrow();
    expect(site.db.prepare('SELECT state, reason FROM station_logs').all()).toEqual([
      { state: 'failed', reason: expect.stringMatching(/^not asked: /) },
    ]);
  });
});
