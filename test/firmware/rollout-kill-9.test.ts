import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../src/store/index.js';
import { exitOf, runCli, runCliJson } from '../support/cli.js';
import { eventually, PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import { updatesFirmware16, updatesFirmware201, type FirmwareUpdates } from '../support/firmware-station.js';
import { spawnDaemonForTest, stationForTest, stationV201ForTest, tempSiteForTest } from '../support/for-test.js';
import { freePort } from '../support/free-port.js';

/**
 * Issue #45's "done when", on 1.6 and on 2.0.1: a rollout over three stations, one of them charging, with
 * --parallel 1 updates the idle ones first, waits for the charging one's transaction to end, survives a kill -9 of
 * the daemon in the middle of a station's download, and ends with every station booted on the new firmware. The
 * daemon is a process of its own, the CLI too (`firmware add`, `firmware rollout`, `firmware status`), the stations
 * real ocpp-rpc clients that download the image over HTTP in Range requests and resume after the restart.
 */

const IDS = ['CP001', 'CP002', 'CP003'];
const IMAGE = randomBytes(2 * 1024 * 1024);

/** One station as the scenario drives it, whatever its OCPP version. */
interface Driven {
  updates: FirmwareUpdates;
  reconnect(): Promise<unknown>;
  startCharging(): Promise<unknown>;
  stopCharging(): Promise<unknown>;
}

type Connect = (url: string, id: string) => Promise<Driven>;

const connect16: Connect = async (url, id) => {
  const station = await stationForTest(url, id);
  const updates = updatesFirmware16(station, { newVersion: '2.0.0', chunkBytes: 8192 });
  await station.boot({ firmwareVersion: '1.0.0' });
  let transactionId = 0;
  return {
    updates,
    reconnect: () => station.reconnect(),
    startCharging: async () => (transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG1' })),
    stopCharging: () => station.stopTransaction({ transactionId, reason: 'EVDisconnected' }),
  };
};

const connect201: Connect = async (url, id) => {
  const station = await stationV201ForTest(url, id);
  const updates = updatesFirmware201(station, { newVersion: '2.0.0', chunkBytes: 8192 });
  await station.boot();
  const transactionId = station.newTransactionId();
  return {
    updates,
    reconnect: () => station.reconnect(),
    startCharging: () =>
      station.transactionEvent('Started', transactionId, { evseId: 1, idToken: 'TAG1', chargingState: 'Charging' }),
    stopCharging: () =>
      station.transactionEvent('Ended', transactionId, { evseId: 1, stoppedReason: 'EVDisconnected' }),
  };
};

describe.each([
  ['1.6', connect16],
  ['2.0.1', connect201],
] as const)('firmware rollout on OCPP %s', (_protocol, connectStation) => {
  it(
    'updates the idle stations first, the charging one after its transaction, through a kill -9; all end installed',
    async () => {
      const [httpPort, ocppPort] = [await freePort(), await freePort()];
      const temp = tempSiteForTest({
        log: { level: 'info' },
        http: { host: '127.0.0.1', port: httpPort, issuer: `http://127.0.0.1:${httpPort}` },
        ocpp: { host: '127.0.0.1', port: ocppPort, path: '/ocpp', securityProfile: 0 },
        firmware: { maxImageBytes: 3 * 1024 * 1024, maxTotalBytes: 4 * 1024 * 1024 },
        sites: [
          {
            id: 's1',
            stations: IDS.map((id) => ({ id, chargePoints: [{ id: `${id}-A`, connectors: [1] }] })),
            meters: [],
            webhooks: [],
          },
        ],
      });
      const file = path.join(temp.dir, 'station-fw-2.0.0.bin');
      writeFileSync(file, IMAGE);
      const config = ['--config', temp.configPath];
      const tooBig = path.join(temp.dir, 'too-big.bin');
      writeFileSync(tooBig, Buffer.alloc(3 * 1024 * 1024 + 1));
      const refused = await runCli(['firmware', 'add', tooBig, ...config]);
      expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/larger than firmware.maxImageBytes/) });
      const stored = path.join(temp.dataDir, 'firmware');
      expect(existsSync(stored) ? readdirSync(stored) : []).toEqual([]);

      const added = await runCliJson<{ imageId: string; sha256: string; firmwareVersion: string }>([
        'firmware',
        'add',
        file,
        '--firmware-version',
        '2.0.0',
        ...config,
      ]);
      expect(added).toMatchObject({ code: 0, data: { firmwareVersion: '2.0.0' } });

      const first = await spawnDaemonForTest(temp.configPath);
      const url = first.ready.ocppUrl;
      const stations = new Map<string, Driven>();
      for (const id of IDS) stations.set(id, await connectStation(url, id));
      const [charging, idle1, idle2] = IDS.map((id) => stations.get(id)!);
      await charging!.startCharging();

      const started = await runCliJson<{ rolloutId: string }>([
        'firmware',
        'rollout',
        added.data.imageId,
        ...IDS.flatMap((id) => ['--station', id]),
        '--parallel',
        '1',
        ...config,
      ]);
      expect(started).toMatchObject({ code: 0, data: { rolloutId: expect.stringMatching(/^ro-/) } });
      const { rolloutId } = started.data;

      // The idle stations, one at a time: the second is sent once the first installed; the charging one is not.
      await eventually(() => idle2!.updates.received.length === 1, 60_000, 'the second idle station sent');
      expect(idle1!.updates.images).toHaveLength(1);
      expect(charging!.updates.received).toEqual([]);

      // kill -9 while the second downloads (or reports): it goes on against the restarted daemon.
      first.child.kill('SIGKILL');
      await exitOf(first.child);
      const db = openDatabase(temp.dataDir);
      const stateOf = (): Record<string, string> =>
        Object.fromEntries(
          db
            .prepare<[string], { stationId: string; state: string }>(
              'SELECT station_id AS stationId, state FROM firmware_rollout_stations WHERE rollout_id = ? ORDER BY position',
            )
            .all(rolloutId)
            .map((r) => [r.stationId, r.state]),
        );
      onTestFinished(() => void db.close());
      expect(stateOf()).toEqual({
        CP001: 'waiting',
        CP002: 'installed',
        CP003: expect.stringMatching(/^(sent|downloading|downloaded|installing)$/),
      });
      // The same ports: the stations and the download locations they were sent find it again.
      await spawnDaemonForTest(temp.configPath);
      await eventually(
        () =>
          charging!.reconnect().then(
            () => true,
            () => false,
          ),
        30_000,
        'the charging station back',
      );
      await eventually(
        () => stateOf().CP003 === 'installed',
        60_000,
        () => JSON.stringify(stateOf()),
      );
      expect(stateOf()).toEqual({ CP001: 'waiting', CP002: 'installed', CP003: 'installed' });
      expect(charging!.updates.received).toEqual([]);

      await charging!.stopCharging();
      await eventually(
        () => stateOf().CP001 === 'installed',
        60_000,
        () => JSON.stringify(stateOf()),
      );
      // What each station said at its last boot: the new firmware.
      const versions = db
        .prepare<[], { id: string; version: string }>(
          "SELECT id, json_extract(boot_info, '$.firmwareVersion') AS version FROM stations ORDER BY id",
        )
        .all();
      expect(versions).toEqual(IDS.map((id) => ({ id, version: '2.0.0' })));

      const status = await runCliJson<{
        state: string;
        stations: Array<{ stationId: string; state: string }>;
      }>(['firmware', 'status', rolloutId, ...config]);
      expect(status.code).toBe(0);
      expect(status.data.state).toBe('done');
      expect(status.data.stations.map((s) => [s.stationId, s.state])).toEqual([
        ['CP001', 'installed'],
        ['CP002', 'installed'],
        ['CP003', 'installed'],
      ]);
      for (const station of [charging, idle1, idle2]) {
        // Each was sent once, restart or not, and fetched the image whole, checked against its SHA-256.
        expect(station!.updates.errors).toEqual([]);
        expect(station!.updates.received).toHaveLength(1);
        expect(station!.updates.images.map((image) => image.equals(IMAGE))).toEqual([true]);
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
