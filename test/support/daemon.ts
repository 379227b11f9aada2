import { onTestFinished } from 'vitest';
import { startDaemon, type Daemon, type DaemonOptions } from '../../src/cli/daemon.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { openDatabase, type Database } from '../../src/store/index.js';
import { connectStation, type SimulatedStation, type StationOptions } from './station.js';
import { tempSite, type TempSite } from './temp-site.js';
import { logSink } from './captured-log.js';
import { keystoreTemplateForDaemons } from './keystore-template.js';

export { eventually } from './eventually.js';

/**
 * Per-test timeout for tests that start chargegate processes (CLI, daemon, simulator from source via tsx):
 * on a shared, loaded machine one such start can take several seconds.
 */
export const PROCESS_TEST_TIMEOUT_MS = 120_000;

/** A station row of the config used by the OCPP tests. */
export const CP001 = { id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1, 2] }] };

/** A second station of the config: another station (a bystander) beside CP001. */
export const CP002 = { id: 'CP002', chargePoints: [{ id: 'CP002-A', connectors: [1] }] };

/** CP001 with a charge point per connector: CP001-A on 1, CP001-B on 2. */
export const CP001_TWO_CHARGE_POINTS = {
  id: 'CP001',
  chargePoints: [
    { id: 'CP001-A', connectors: [1] },
    { id: 'CP001-B', connectors: [2] },
  ],
};

export interface EventRow {
  eventType: string;
  siteId: string;
  payload: Record<string, unknown>;
}

/**
 * One in-process daemon on a temp site (real SQLite file, real listeners on loopback port 0), a second database
 * connection for the assertions (as the CLI would have), and its JSON log lines.
 */
export interface TestDaemon {
  temp: TempSite;
  daemon: Daemon;
  db: Database;
  logs: Array<Record<string, unknown>>;
  url: string;
  connect(identity?: string, password?: string, options?: Omit<StationOptions, 'password'>): Promise<SimulatedStation>;
  events(type?: string): EventRow[];
  logged(msg: string): Array<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** What a test daemon is started with besides its config: the load manager's and the uplink's clocks (real if unset). */
export type TestDaemonOptions = Pick<DaemonOptions, 'linkClock' | 'loadClock'>;

/**
 * startTestDaemon for the running test: stopped when the test finishes, passed or failed (cleanup where it is made).
 */
export async function daemonForTest(
  config: Record<string, unknown> = {},
  options: TestDaemonOptions = {},
): Promise<TestDaemon> {
  const daemon = await startTestDaemon(config, options);
  onTestFinished(() => daemon.stop());
  return daemon;
}

export async function startTestDaemon(
  config: Record<string, unknown> = {},
  options: TestDaemonOptions = {},
): Promise<TestDaemon> {
  const temp = tempSite({ log: { level: 'info' }, ...config });
  const { sink, lines: logs } = logSink();
  const loaded = loadConfig(temp.configPath);
  (await keystoreTemplateForDaemons(config, loaded))?.copyInto(loaded.dataDir);
  const daemon = await startDaemon({
    configPath: temp.configPath,
    config: loaded,
    logger: createLogger(loaded.log.level, sink),
    handleSignals: false,
    ...options,
  });
  // The config may put the data elsewhere (a small tmpfs, say): the assertions read the daemon's own database.
  const db = openDatabase(loaded.dataDir);
  const stations: SimulatedStation[] = [];
  let stopped: Promise<void> | undefined;
  const scheme = loaded.ocpp.securityProfile >= 2 ? 'wss' : 'ws';
  const url = `${scheme}://127.0.0.1:${daemon.ocppPort}${loaded.ocpp.path}`;
  return {
    temp,
    daemon,
    db,
    logs,
    url,
    async connect(identity = 'CP001', password, options) {
      const station = await connectStation(url, identity, password, options);
      stations.push(station);
      return station;
    },
    events(type) {
      const rows = db.prepare('SELECT event_type, site_id, payload FROM events ORDER BY seq').all() as Array<{
        event_type: string;
        site_id: string;
        payload: string;
      }>;
      return rows
        .map((r) => ({
          eventType: r.event_type,
          siteId: r.site_id,
          payload: JSON.parse(r.payload) as Record<string, unknown>,
        }))
        .filter((e) => type === undefined || e.eventType === type);
    },
    logged: (msg) => logs.filter((l) => l.msg === msg),
    // Once: a test may stop its daemon itself before the cleanup registered for it runs.
    stop() {
      stopped ??= (async () => {
        await Promise.all(stations.map((s) => s.close().catch(() => undefined)));
        await daemon.stop();
        db.close();
        temp.cleanup();
      })();
      return stopped;
    },
  };
}

/** The site config with CP001 and the given webhooks (so delivery rows get written). */
export function siteWith(
  webhooks: Array<Record<string, unknown>> = [],
  stations: Array<Record<string, unknown>> = [CP001],
): Record<string, unknown> {
  return { sites: [{ id: 's1', stations, meters: [], webhooks }] };
}
