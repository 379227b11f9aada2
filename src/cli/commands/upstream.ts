import type { Command } from 'commander';
import type { UplinkStationStatus } from '../../uplink/index.js';
import { liveDaemonPart } from '../daemon-status.js';
import { CliError, EXIT_USAGE, output, table, withContext, type GlobalOptions } from '../context.js';

/** The uplink folder is loaded by this command only (it brings ocpp-rpc along). */
const uplink = () => import('../../uplink/index.js');

/** What `upstream status` shows of a station: the running daemon's view, or the queue as written (stale). */
type Row = Omit<UplinkStationStatus, 'level' | 'state'> & { state: string; level: string | null; live: boolean };

/** `chargegate upstream status`: each station's uplink to the CSMS (docs/design/uplink.md#uplink-what-the-csms-sees). */
export function registerUpstream(program: Command): void {
  const upstream = program.command('upstream').description("the uplink to the operator's CSMS (upstream.csms)");

  upstream
    .command('status')
    .description(
      'per station: connected to the CSMS, messages queued, the oldest queued, dropped; as the running daemon sees them (else as written, stale)',
    )
    .action((_options: unknown, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), async (ctx) => {
        if (!ctx.config.upstream?.csms)
          throw new CliError('upstream.csms is not configured: there is no uplink to show', EXIT_USAGE);
        const live = (await liveDaemonPart(ctx.config, 'upstream'))?.stations as UplinkStationStatus[] | undefined;
        let stations: Row[];
        if (live) stations = live.map((s) => ({ ...s, live: true }));
        else {
          const { queueStats, droppedCounts } = await uplink();
          const stats = queueStats(ctx.db);
          const dropped = droppedCounts(ctx.db);
          stations = [...new Set([...stats.keys(), ...dropped.keys()])].sort().map((stationId) => ({
            stationId,
            connected: false,
            state: 'daemon not running',
            queued: stats.get(stationId)?.queued ?? 0,
            oldestQueuedAt: stats.get(stationId)?.oldestQueuedAt ?? null,
            dropped: dropped.get(stationId) ?? 0,
            level: null,
            live: false,
          }));
        }
        output(ctx.json, { url: ctx.config.upstream.csms.url, live: live !== undefined, stations }, () =>
          stations.length === 0
            ? `No station has an uplink to ${ctx.config.upstream!.csms!.url} yet${live ? '' : ' (is the daemon running?)'}.`
            : table(
                ['STATION', 'CONNECTED', 'STATE', 'QUEUED', 'OLDEST QUEUED', 'DROPPED', 'HEALTH'],
                stations.map((s) => [
                  s.stationId,
                  s.connected ? 'yes' : 'no',
                  s.state,
                  String(s.queued),
                  s.oldestQueuedAt ?? '-',
                  String(s.dropped),
                  s.level ?? '- (stale: the daemon does not answer)',
                ]),
              ),
        );
      }),
    );
}
