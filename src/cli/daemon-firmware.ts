import type { Config } from '../config/index.js';
import { FirmwareRollouts } from '../firmware/index.js';
import type { CentralSystem } from '../ocpp/index.js';
import type { Site } from '../site/index.js';
import type { StationOperations } from '../stations/index.js';
import type { DaemonPart, DaemonShared, Storage } from './daemon-parts.js';

/** How often stations without progress are looked for and waiting ones sent (firmware.stationTimeoutS is in seconds). */
const ROLLOUT_TICK_MS = 1000;

/**
 * Firmware rollouts (contract 11.2): resumed from the database at start, told of each station's progress by the
 * central system (inside the write of its call), of transactions ending and stations connecting (a waiting station may
 * go), and ticked for timeouts. UpdateFirmware goes out through the station operations; the rollouts tell the
 * inventory which station they occupy.
 */
export function startFirmwareRollouts(
  options: {
    config: () => Config;
    site: Site;
    centralSystem: CentralSystem;
    storage: Storage;
    stations: StationOperations;
  },
  shared: DaemonShared,
): { part: DaemonPart; rollouts: FirmwareRollouts } {
  const { config, site, centralSystem, storage, stations } = options;
  const rollouts = new FirmwareRollouts({
    writer: storage.group,
    site,
    live: centralSystem.commands,
    operations: stations,
    config,
    logger: shared.logger,
  });
  stations.addLongOperations((stationId) => rollouts.operationOf(stationId));
  const tick = (): void => {
    try {
      rollouts.tick();
    } catch (err) {
      shared.logger.error({ err, component: 'firmware' }, 'firmware rollouts could not go on');
    }
  };
  const soon = (): void => void setImmediate(tick);
  const stopHearing = [
    centralSystem.onFirmwareProgress({
      status: (stationId, status, requestId) => rollouts.statusReported(stationId, status, requestId),
      booted: (stationId, version) => rollouts.booted(stationId, version),
    }),
    site.transactions.onOpenedOrClosed(soon),
    centralSystem.onConnection(({ connected }) => connected && soon()),
  ];
  const timer = setInterval(tick, ROLLOUT_TICK_MS).unref();
  soon();
  return {
    part: {
      name: 'firmware',
      stop: () => {
        clearInterval(timer);
        stopHearing.forEach((stop) => stop());
      },
    },
    rollouts,
  };
}
