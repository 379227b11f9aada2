/**
 * A simulated OCPP 1.6-J station for trying chargegate by hand: connects, boots, authorizes a tag, starts and
 * stops one charging session, then exits. Against `npm start` (config/default.yaml) the outbox then holds the
 * four event types (Authorize, ChargePointStatus, StartTransaction, StopTransaction). With --stay it then stays
 * online, heartbeating, and carries out the API's remote starts and stops like a real station, until Ctrl-C.
 *
 *   npm run simulate:station -- [--url ws://127.0.0.1:9000/ocpp] [--id CP001] [--password P]
 *                               [--id-tag DEMO-TAG-1] [--connector 1] [--ca server-cert.pem] [--stay]
 */
import { readFileSync } from 'node:fs';
import { connectStation, type SimulatedStation } from '../test/support/station.js';
import { scriptArguments } from './command-line.js';

const USAGE =
  'usage: station-simulator [--url ws://127.0.0.1:9000/ocpp] [--id CP001] [--password P] [--id-tag TAG] [--connector N] [--ca FILE] [--stay]';

async function main(): Promise<number> {
  const parsed = scriptArguments(
    USAGE,
    {
      url: { type: 'string', default: 'ws://127.0.0.1:9000/ocpp' },
      id: { type: 'string', default: 'CP001' },
      password: { type: 'string' },
      'id-tag': { type: 'string', default: 'DEMO-TAG-1' },
      connector: { type: 'string', default: '1' },
      ca: { type: 'string' },
      stay: { type: 'boolean' },
    },
    (values) => {
      const connectorId = Number(values.connector);
      if (!Number.isInteger(connectorId) || connectorId < 1)
        throw new Error(`--connector: a connector number of 1 or more, not "${values.connector}"`);
      return { values, connectorId };
    },
  );
  if (typeof parsed === 'number') return parsed;
  const { values, connectorId } = parsed;
  const idTag = values['id-tag'];
  const step = (text: string) => console.log(`[${values.id}] ${text}`);

  step(`connecting to ${values.url}/${values.id}${values.password ? ' with basic auth' : ''}`);
  let station;
  try {
    station = await connectStation(
      values.url,
      values.id,
      values.password,
      values.ca ? { ca: readFileSync(values.ca) } : {},
    );
  } catch (err) {
    const status = (err as { code?: unknown }).code;
    console.error(`connection refused: ${(err as Error).message}`);
    if (status === 401)
      console.error(
        "the central system wants this station's password: `chargegate station pair <id> --site <site>` prints it; pass it with --password",
      );
    return 1;
  }
  try {
    const boot = await station.boot({ chargePointVendor: 'chargegate', chargePointModel: 'station-simulator' });
    step(`BootNotification: ${boot.status} (heartbeat every ${boot.interval} s)`);
    if (boot.status !== 'Accepted') {
      console.error(
        boot.status === 'Pending'
          ? 'the station is unknown here and waits for pairing: `chargegate station list --pending`, then `chargegate station pair`'
          : 'the central system rejects this station (blocked or removed)',
      );
      return 1;
    }
    await station.statusNotification({ connectorId, status: 'Available' });
    const authorization = await station.authorize(idTag);
    step(
      `Authorize ${idTag}: ${authorization.status}${authorization.status === 'Accepted' ? '' : ` (a real station would not charge; \`chargegate idtag add ${idTag}\` accepts it)`}`,
    );

    await station.statusNotification({ connectorId, status: 'Preparing' });
    const meterStart = 12_345;
    const started = await station.startTransactionWithInfo({ connectorId, idTag, meterStart });
    step(
      `StartTransaction on connector ${connectorId}: transactionId ${started.transactionId}, tag ${started.idTagInfo.status}, meter ${meterStart} Wh`,
    );
    await station.statusNotification({ connectorId, status: 'Charging' });
    station.addEnergy(connectorId, 7_500);
    await station.meterValues({ connectorId, transactionId: started.transactionId });

    const stopped = await station.stopTransaction({ transactionId: started.transactionId, reason: 'EVDisconnected' });
    step(
      `StopTransaction: meter ${meterStart + 7_500} Wh, reason EVDisconnected${stopped.idTagInfo ? `, tag ${stopped.idTagInfo.status}` : ''}`,
    );
    await station.statusNotification({ connectorId, status: 'Available' });
    if (values.stay) await stayOnline(station, boot.interval, step);
    step('done');
    return 0;
  } catch (err) {
    console.error(`the central system refused a call: ${(err as Error).message}`);
    return 1;
  } finally {
    await station.close();
  }
}

/**
 * Online until SIGINT or SIGTERM: heartbeats at the central system's interval; RemoteStartTransaction and
 * RemoteStopTransaction are accepted and carried out by the simulated station itself, and told here.
 */
async function stayOnline(station: SimulatedStation, intervalS: number, step: (text: string) => void): Promise<void> {
  step('staying online for remote start and stop (Ctrl-C to leave)');
  let leaving = false;
  const left = new Promise<void>((resolve) => {
    const leave = () => {
      leaving = true;
      resolve();
    };
    process.once('SIGINT', leave);
    process.once('SIGTERM', leave);
  });
  const heartbeats = setInterval(
    () => void station.heartbeat().catch((err: unknown) => step(`Heartbeat failed: ${(err as Error).message}`)),
    intervalS * 1000,
  );
  // The mailboxes time out to let the loops see `leaving`; a timeout is not an error here.
  const watch = async (
    next: () => Promise<{ transactionId: number; connectorId: number; idTag: string }>,
    what: string,
  ) => {
    while (!leaving) {
      const done = await next().catch(() => undefined);
      if (done)
        step(`${what}: transactionId ${done.transactionId} on connector ${done.connectorId}, tag ${done.idTag}`);
    }
  };
  const watchers = [
    watch(() => station.nextRemoteStart(1000), 'RemoteStartTransaction -> StartTransaction'),
    watch(() => station.nextRemoteStop(1000), 'RemoteStopTransaction -> StopTransaction'),
  ];
  await left;
  clearInterval(heartbeats);
  await Promise.all(watchers);
}

process.exitCode = await main();
