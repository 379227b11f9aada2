import type { ChildProcess } from 'node:child_process';
import { installedNodeArgs, spawnDaemon } from '../../test/support/cli.js';
import { putIdTag } from '../../src/authorization/index.js';
import { openDatabase } from '../../src/store/index.js';
import type { TempSite } from '../../test/support/temp-site.js';
import type { WebhookSignature } from '../../src/config/index.js';
import { nowMs } from './measure.js';
import { stationIds } from './identities.js';
import { freePort, terminate, type ProcessGroup } from './processes.js';

/** A `chargegate run` process under test, on a temporary data dir and config with ports the bench chose. */
export interface ChargegateProcess {
  readonly pid: number;
  readonly site: TempSite;
  readonly ocppUrl: string;
  /** From spawn to the "chargegate ready" log line, as an installer would see it. */
  readonly startupMs: number;
  /** The daemon's own figure in that log line: start of startDaemon() to ready, without Node's boot. */
  readonly selfReportedReadyMs: number | null;
  /** The daemon's log so far (JSON lines), for error reports. */
  logTail(lines?: number): string;
  /** Throws with the log tail if the daemon has died since it was ready. */
  assertAlive(): void;
  stop(): Promise<void>;
}

export interface DaemonLauncher {
  built: boolean;
  /** The daemon writes a V8 CPU profile there when it stops. */
  profileDir?: string;
}

/**
 * Starts chargegate with the given top-level config keys over the test support's loopback base config.
 * Logging stays at `info`, the production default: what the daemon logs is part of what it costs.
 */
export async function startChargegate(
  launcher: DaemonLauncher,
  processes: ProcessGroup,
  config: Record<string, unknown>,
  site: TempSite,
): Promise<ChargegateProcess> {
  const httpPort = await freePort();
  const ocppPort = await freePort();
  site.write({
    log: { level: 'info' },
    http: { host: '127.0.0.1', port: httpPort },
    ocpp: { host: '127.0.0.1', port: ocppPort, path: '/ocpp', securityProfile: 0 },
    ...config,
  });
  const spawnedAt = nowMs();
  const { child, logs } = await spawnDaemon(site.configPath, {
    built: launcher.built,
    readyTimeoutMs: 60_000,
    nodeArgs: [
      ...(launcher.built ? installedNodeArgs() : []),
      ...(launcher.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${launcher.profileDir}/chargegate`] : []),
    ],
  });
  const startupMs = nowMs() - spawnedAt;
  processes.adopt(child);
  return chargegateHandle(child, logs, site, ocppPort, startupMs);
}

function chargegateHandle(
  child: ChildProcess,
  logs: string[],
  site: TempSite,
  ocppPort: number,
  startupMs: number,
): ChargegateProcess {
  const ready = logs.find((l) => l.includes('"chargegate ready"'));
  const selfReportedReadyMs = ready ? ((JSON.parse(ready) as { readyMs?: number }).readyMs ?? null) : null;
  const logTail = (lines = 20) => logs.slice(-lines).join('\n');
  return {
    pid: child.pid!,
    site,
    ocppUrl: `ws://127.0.0.1:${ocppPort}/ocpp`,
    startupMs,
    selfReportedReadyMs,
    logTail,
    assertAlive() {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`chargegate exited (${child.signalCode ?? child.exitCode}):\n${logTail()}`);
    },
    stop: () => terminate(child, 10_000),
  };
}

/** The `sites` entry of a bench config: `stations` stations named CS0001..., one charge point with connector 1 each. */
export function benchSite(options: {
  stations?: number;
  webhookUrl?: string;
  events?: string[];
  meters?: object[];
  signature?: WebhookSignature;
}): Record<string, unknown> {
  const stations = stationIds(options.stations ?? 0).map((id) => ({
    id,
    chargePoints: [{ id: `${id}-A`, connectors: [1] }],
  }));
  const webhooks = options.webhookUrl
    ? [
        {
          id: 'bench',
          url: options.webhookUrl,
          events: options.events ?? ['Authorize', 'StartTransaction', 'StopTransaction', 'ChargePointStatus'],
          ...(options.signature && { signature: options.signature }),
        },
      ]
    : [];
  return { id: 'bench', stations, meters: options.meters ?? [], webhooks };
}

/**
 * Puts tags on the local list (Accepted) before the daemon starts, through the function `chargegate idtag add`
 * uses; one CLI process per tag would take minutes for 2,000 stations.
 */
export function seedIdTags(site: TempSite, idTags: readonly string[]): void {
  const db = openDatabase(site.dataDir);
  try {
    db.transaction(() => {
      for (const idTag of idTags) putIdTag(db, { idTag, status: 'Accepted', expiresAt: null, siteId: null });
    })();
  } finally {
    db.close();
  }
}
