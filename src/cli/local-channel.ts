import { once } from 'node:events';
import { lstatSync, rmSync } from 'node:fs';
import { ConfigError, ListenError } from '../config/index.js';
import type { FirmwareRollouts } from '../firmware/index.js';
import {
  createHttpServer,
  registerFirmwareRoutes,
  logRoutes,
  registerStationRoutes,
  type LogRoutesDeps,
  type StationPrincipal,
  type StationRoutesDeps,
} from '../http/index.js';
import type { DaemonPart, DaemonShared } from './daemon-parts.js';
import { localSocketPath, socketPathProblem } from './local-socket.js';

/**
 * Whoever can open the socket is the data dir's owner, who could read the database and the keystore anyway: the
 * installer on the box reaches every station and may do everything, recorded as `cli`.
 */
const CLI: StationPrincipal = { caller: 'cli', may: () => true, reaches: () => true };

/** Only the owner may connect; umask bits, so the socket never exists with more. */
const OWNER_ONLY_UMASK = 0o177;

/**
 * HTTP on a Unix socket in `dataDir`, mode 0600: only the data dir's owner (the CLI run as the daemon's user, or
 * root) can use it, and nothing new listens on the network. Started after the data-dir lock is held, so a socket
 * left there is a killed daemon's (kill -9 and power loss leave it) and is replaced; removed at stop. A dataDir too
 * long for a socket's path is a ConfigError naming dataDir.
 */
export async function startLocalChannel(
  options: {
    configPath: string;
    dataDir: string;
    stations: StationRoutesDeps['stations'];
    firmware: Pick<FirmwareRollouts, 'create' | 'view' | 'cancel' | 'recent'>;
    logs: Omit<LogRoutesDeps, 'stations' | 'principal'>;
  },
  shared: DaemonShared,
): Promise<DaemonPart> {
  const socketPath = localSocketPath(options.dataDir);
  // A config problem: exit 2, which systemd does not restart into (RestartPreventExitStatus).
  const tooLong = socketPathProblem(options.dataDir);
  if (tooLong) throw new ConfigError(options.configPath, [tooLong]);
  const logger = shared.logger.child({ component: 'local-channel' });
  if (lstatSync(socketPath, { throwIfNoEntry: false })?.isSocket()) {
    rmSync(socketPath);
    logger.info({ socketPath }, 'socket left by an earlier run replaced');
  }
  const app = await createHttpServer({
    logger: shared.logger,
    routes: [
      (app) => registerStationRoutes(app, { stations: options.stations, principal: async () => CLI }),
      (app) =>
        registerFirmwareRoutes(app, {
          rollouts: options.firmware,
          stations: () => options.stations.list(),
          principal: async () => CLI,
        }),
      logRoutes({ ...options.logs, stations: options.stations, principal: async () => CLI }),
    ],
    health: () => shared.health,
    metrics: shared.metrics,
    // The owner, as above: metrics need no token here.
    statusGuard: async () => undefined,
  });
  await app.ready();
  // The umask, not a chmod after listen: no moment when another user could connect. bind() runs synchronously
  // inside listen(), and the main thread owns the umask.
  const umask = process.umask(OWNER_ONLY_UMASK);
  try {
    app.server.listen(socketPath);
  } finally {
    process.umask(umask);
  }
  try {
    await once(app.server, 'listening');
  } catch (err) {
    await app.close();
    throw new ListenError(`cannot listen on ${socketPath}: ${(err as Error).message}`, { cause: err });
  }
  logger.info({ socketPath }, 'local channel listening');
  return {
    name: 'local-channel',
    stop: async () => {
      // A CLI command waiting on a station's answer gets its connection closed, not a stop held up by it.
      app.server.closeAllConnections();
      await app.close();
      rmSync(socketPath, { force: true });
    },
  };
}
