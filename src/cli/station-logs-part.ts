import { lookup } from 'node:dns/promises';
import { isIPv4 } from 'node:net';
import { ListenError, stationFacingBaseUrl, type Config } from '../config/index.js';
import { uploadRoutes } from '../http/index.js';
import type { CentralSystem } from '../ocpp/index.js';
import {
  LogCollections,
  LogFiles,
  LogRecords,
  loadFtpUploads,
  SYSTEM_LOGS_CLOCK,
  UploadGrants,
  UploadReception,
  type FtpUploads,
} from '../station-logs/index.js';
import type { StationOperations } from '../stations/index.js';
import type { DaemonPart, DaemonShared, Storage } from './daemon-parts.js';

/** How often files and records older than logs.retainDays are looked for (a look reads the folder, writes nothing). */
const PRUNE_EVERY_MS = 3_600_000;

/**
 * Station logs (contract 11.3): the collections, the HTTP upload routes on the one listener, the FTP listener when
 * logs.ftp is configured, the stations' log status notifications routed to the collections, and the pruning timer.
 */
export async function startStationLogs(
  options: { config: () => Config; storage: Storage; centralSystem: CentralSystem; stations: StationOperations },
  shared: DaemonShared,
): Promise<{ part: DaemonPart; logs: LogCollections; files: LogFiles }> {
  const { config, storage, centralSystem, stations } = options;
  const clock = SYSTEM_LOGS_CLOCK;
  const files = new LogFiles(config().dataDir);
  const grants = new UploadGrants(clock.now);
  let ftp: { uploads: FtpUploads; host: string } | undefined;
  const logs = new LogCollections({
    config,
    records: new LogRecords(storage.group),
    files,
    grants,
    operations: stations,
    protocolOf: (stationId) => centralSystem.commands.protocolOf(stationId),
    locations: {
      httpBase: () => stationFacingBaseUrl(config()),
      ftp: () => ftp && { host: ftp.host, port: ftp.uploads.port },
    },
    logger: shared.logger,
    clock,
  });
  logs.recover();
  const reception = new UploadReception({
    grants,
    files,
    maxUploadBytes: () => config().logs.maxUploadBytes,
    events: logs,
    logger: shared.logger.child({ component: 'station-logs' }),
    now: clock.now,
  });
  shared.routes.push(uploadRoutes(reception));
  const ftpConfig = config().logs.ftp;
  if (ftpConfig) {
    // Stations reach the FTP listener under the same name as the HTTP one.
    const host = new URL(stationFacingBaseUrl(config())).hostname.replace(/^\[|\]$/g, '');
    const { startFtpUploads } = await loadFtpUploads();
    const uploads = await startFtpUploads({
      host: ftpConfig.host,
      port: ftpConfig.port,
      passivePorts: ftpConfig.passivePorts,
      passiveAddress: ftpConfig.passiveHost ?? (isIPv4(host) ? host : await passiveAddressOf(host)),
      reception,
      logger: shared.logger,
      now: clock.now,
    });
    ftp = { uploads, host };
  }
  stations.addLongOperations((stationId) => logs.current(stationId));
  const stopHearing = centralSystem.onLogStatus((stationId, notification) =>
    logs.statusNotification(stationId, notification),
  );
  logs.prune();
  const pruning = setInterval(() => logs.prune(), PRUNE_EVERY_MS);
  return {
    part: {
      name: 'station-logs',
      stop: async () => {
        clearInterval(pruning);
        stopHearing();
        logs.stop();
        await ftp?.uploads.close();
      },
    },
    logs,
    files,
  };
}

/** The IPv4 address of the name stations reach the gateway under, for PASV answers (which carry an address). */
async function passiveAddressOf(host: string): Promise<string> {
  try {
    return (await lookup(host, { family: 4 })).address;
  } catch (err) {
    throw new ListenError(
      `logs.ftp: ${host} (the host of firmware.baseUrl or http.issuer) has no IPv4 address for passive FTP ` +
        `(${(err as Error).message}): set logs.ftp.passiveHost`,
      { cause: err },
    );
  }
}
