import type { Command } from 'commander';
import { createLogger } from '../../log/index.js';
import { sessionMeters, type Config } from '../../config/index.js';
import { liveDaemonPart } from '../daemon-status.js';
import type { MeterHealth, MeterReadResult } from '../../modbus/index.js';

/** The modbus folder is loaded by the meter commands only (faster start for every other command). */
const modbus = () => import('../../modbus/index.js');
import {
  CliError,
  EXIT_FAILURE,
  loadCommandConfig,
  output,
  table,
  withContext,
  type GlobalOptions,
} from '../context.js';

/** The running daemon's live meter health; undefined when it does not answer. */
async function liveMeterHealth(config: Config): Promise<Record<string, MeterHealth> | undefined> {
  return (await liveDaemonPart(config, 'meters'))?.meters as Record<string, MeterHealth> | undefined;
}

/** `chargegate meter status|read`: what an installer checks when wiring or troubleshooting Modbus meters. */
export function registerMeter(program: Command): void {
  const meter = program
    .command('meter')
    .description('Modbus energy meters: health as the daemon sees it, or one reading now');

  meter
    .command('status')
    .description(
      'per meter: last good reading, errors, bus latency, session, as the running daemon sees them (else as it last wrote them, stale)',
    )
    .action((_options: unknown, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), async (ctx) => {
        const { loadHealth } = await modbus();
        const live = await liveMeterHealth(ctx.config);
        const stored = new Map(loadHealth(ctx.db).map((h) => [h.meterId, h]));
        const meters = ctx.config.sites.flatMap((site) =>
          sessionMeters(site).map((m) => {
            const known = {
              meterId: m.id,
              siteId: site.id,
              chargePointId: m.chargePointId,
              connectorId: m.connectorId,
              model: m.model,
            };
            const now = live?.[m.id];
            if (now) return { ...known, updatedAt: 'live', stale: false, ...now };
            const h = stored.get(m.id);
            return h
              ? { ...known, updatedAt: h.updatedAt.toISOString(), stale: true, ...h.health }
              : { ...known, updatedAt: null, stale: true };
          }),
        );
        output(ctx.json, { meters }, () =>
          table(
            [
              'METER',
              'CHARGE POINT',
              'STATUS',
              'ENERGY kWh',
              'CURRENT A',
              'POWER W',
              'SESSION',
              'LAST GOOD READING',
              'ERRORS',
              'LATENCY ms',
              'UPDATED',
            ],
            meters.map((m) => {
              if (!('status' in m))
                return [
                  m.meterId,
                  m.chargePointId,
                  '-',
                  '-',
                  '-',
                  '-',
                  '-',
                  '-',
                  '-',
                  '-',
                  'never (is the daemon running?)',
                ];
              const r = m.lastReading;
              return [
                m.meterId,
                `${m.chargePointId}/${m.connectorId}`,
                `${m.status}${m.online ? '' : ' offline'}`,
                r ? r.energyKWh.toFixed(3) : '-',
                r ? r.currentA.map((a) => a.toFixed(1)).join('/') : '-',
                r?.powerW !== undefined ? r.powerW.toFixed(0) : '-',
                m.session.transactionId !== undefined
                  ? `${m.session.phase} #${m.session.transactionId}`
                  : m.session.phase,
                m.lastGoodReadingAt ?? '-',
                `${m.errors} failed, ${m.rejected} rejected`,
                m.busLatencyMs?.average !== undefined ? String(m.busLatencyMs.average) : '-',
                m.stale ? `${m.updatedAt} (stale: the daemon does not answer)` : 'live',
              ];
            }),
          ),
        );
      }),
    );

  meter
    .command('read')
    .description("read a meter once through the daemon's own Modbus code and print energy, currents and power")
    .argument('<meterId>', 'a meter id from the config')
    .action(async (meterId: string, _options: unknown, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const { config } = loadCommandConfig(globals);
      const { BusError, findMeter, readMeterOnce } = await modbus();
      const found = findMeter(config, meterId);
      if (!found) {
        const ids = config.sites.flatMap((s) => s.meters.map((m) => m.id));
        throw new CliError(
          `no meter "${meterId}" in the config${ids.length > 0 ? ` (meters: ${ids.join(', ')})` : ''}`,
          EXIT_FAILURE,
        );
      }
      let result: MeterReadResult;
      try {
        result = await readMeterOnce(found.meter, createLogger('silent'));
      } catch (err) {
        if (err instanceof BusError) {
          const hint = /Cannot lock port/.test(err.message)
            ? ' (a running daemon holds this serial device; stop it to read the meter by hand)'
            : '';
          throw new CliError(`meter ${meterId}: ${err.message}${hint}`, EXIT_FAILURE, { cause: err });
        }
        throw err;
      }
      const { reading, bus } = result;
      const data = {
        meterId,
        model: result.model,
        modelName: result.modelName,
        bus: bus.key,
        unitId: found.meter.connection.unitId,
        readAt: reading.at.toISOString(),
        energyKWh: reading.energyKWh,
        currentA: reading.currentA,
        ...(reading.powerW !== undefined && { powerW: reading.powerW }),
        ...(result.problem && { problem: result.problem }),
        requests: result.requests,
        ...(bus.averageLatencyMs !== undefined && { averageLatencyMs: bus.averageLatencyMs }),
      };
      output(globals.json === true, data, () =>
        [
          `${meterId}: ${result.modelName} (${result.model}) on ${bus.key} unit ${data.unitId}`,
          `energy import  ${reading.energyKWh.toFixed(3)} kWh`,
          `current        ${reading.currentA.map((a, i) => `L${i + 1} ${a.toFixed(3)} A`).join('  ')}`,
          ...(reading.powerW !== undefined ? [`power          ${reading.powerW.toFixed(1)} W`] : []),
          `read with ${data.requests} request${data.requests === 1 ? '' : 's'}${bus.averageLatencyMs !== undefined ? `, ${bus.averageLatencyMs} ms average latency` : ''}`,
          ...(result.problem ? [`bad reading, the daemon would reject it: ${result.problem}`] : []),
        ].join('\n'),
      );
      if (result.problem) process.exitCode = EXIT_FAILURE;
    });
}
