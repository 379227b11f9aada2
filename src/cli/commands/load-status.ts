import type { Command } from 'commander';
import type { CircuitStatus, ConnectorStatus, LoadStatus, PhaseCurrents } from '../../load/index.js';
import { CliError, EXIT_FAILURE, loadCommandConfig, output, table, type GlobalOptions } from '../context.js';
import { daemonStatus } from '../daemon-status.js';

const amperes = (a: number | undefined): string => (a === undefined ? '-' : a.toFixed(1));
const phases = (a: PhaseCurrents | undefined): string =>
  a === undefined ? '-' : [a.L1, a.L2, a.L3].map((x) => x.toFixed(1)).join('/');

function circuitRow(c: CircuitStatus): string[] {
  return [
    c.circuitId,
    c.siteId,
    c.parent ?? '-',
    amperes(c.maxCurrentA),
    c.meterId === undefined ? '-' : `${c.meterId} ${c.meter}`,
    phases(c.measuredA),
    phases(c.otherA),
    phases(c.allowedA),
    amperes(c.headroomA),
  ];
}

function connectorRow(k: ConnectorStatus): string[] {
  return [
    `${k.chargePointId}/${k.connectorId}`,
    k.stationId ?? '(Modbus)',
    k.circuitId,
    k.state,
    amperes(k.allowedA),
    amperes(k.drawnA),
    k.transactionId === undefined ? '-' : String(k.transactionId),
  ];
}

/**
 * `chargegate load status` (docs/configuration/circuits.md#circuits-load-management): what the running daemon's load controller does now,
 * from its status.json; the controller's state lives in the daemon's memory alone, so without a daemon there is
 * nothing to show (exit 1).
 */
export function registerLoadStatus(load: Command): void {
  load
    .command('status')
    .description(
      'per circuit: limit, measured and other load per phase, headroom; per managed connector: state, allowed, drawn (asks the running daemon)',
    )
    .action(async (_options: unknown, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const { config } = loadCommandConfig(globals);
      const status = await daemonStatus(config);
      if (!('snapshot' in status))
        throw new CliError(`cannot show the load status: ${status.unavailable}`, EXIT_FAILURE);
      const data: LoadStatus = status.snapshot.load ?? { circuits: [], connectors: [] };
      output(globals.json === true, data, () =>
        status.snapshot.load === null
          ? 'no circuits in the config: load management is off'
          : [
              table(
                [
                  'CIRCUIT',
                  'SITE',
                  'PARENT',
                  'LIMIT A',
                  'METER',
                  'MEASURED A L1/L2/L3',
                  'OTHER A',
                  'ALLOWED A',
                  'HEADROOM A',
                ],
                data.circuits.map(circuitRow),
              ),
              '',
              table(
                ['CONNECTOR', 'STATION', 'CIRCUIT', 'STATE', 'ALLOWED A', 'DRAWN A', 'TRANSACTION'],
                data.connectors.map(connectorRow),
              ),
            ].join('\n'),
      );
    });
}
