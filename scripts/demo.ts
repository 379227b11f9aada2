/**
 * `npm run demo`: chargegate end to end on this machine, loopback only, nothing to install but `npm ci`.
 * Starts the daemon on a throw-away config, a simulated OCPP station, a simulated Modbus TCP meter and a partner
 * receiver that verifies every webhook signature against the daemon's JWKS. Runs one charging session from each
 * source (authorize/start/meter/stop over OCPP; current up/energy/current down on the meter), shows the verified
 * webhooks, then stops everything and exits 0, or 1 when a step or a webhook did not come through.
 *
 *   npm run demo [-- --keep-running]     --keep-running: stay up (status page, OCPP, API) until Ctrl-C, and print
 *                                        the config path and an API client to try the CLI and the API with
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { Applications } from '../src/applications/index.js';
import { putIdTag } from '../src/authorization/index.js';
import { startDaemon, type Daemon } from '../src/cli/daemon.js';
import { EVENT_TYPES, loadConfig } from '../src/config/index.js';
import { createLogger } from '../src/log/index.js';
import { METER_MODELS } from '../src/modbus/index.js';
import { openDatabase } from '../src/store/index.js';
import { freePort } from '../test/support/free-port.js';
import { MeterSimulator } from '../test/support/meter-simulator.js';
import { connectStation, type SimulatedStation } from '../test/support/station.js';
import { startDemoReceiver, type DemoReceiver } from './demo-receiver.js';

const USAGE = 'usage: npm run demo [-- --keep-running]';
const ID_TAG = 'DEMO-TAG-1';
const SITE = 'demo-site';
/** Long enough for a loaded machine; the whole demo usually takes about 10 s. */
const STEP_TIMEOUT_MS = 30_000;

interface Envelope {
  eventId: string;
  eventType: string;
  siteId: string;
  timestamp: string;
  payload: {
    chargePointId?: string;
    stationId?: string;
    connectorId?: number;
    status?: string;
    transactionId?: number;
    meterStart?: number;
    meterStop?: number;
    reason?: string;
  };
}

const say = (who: string, text: string) => console.log(`${`[${who}]`.padEnd(10)} ${text}`);

/** What the partner has received so far, and a way to wait for an event. */
class PartnerInbox {
  constructor(readonly partner: DemoReceiver) {}

  get envelopes(): Envelope[] {
    return this.partner.receiver.requests.map((r) => r.json<Envelope>());
  }

  async waitFor(what: string, match: (e: Envelope) => boolean): Promise<Envelope> {
    await this.partner.receiver
      .waitFor((requests) => requests.some((r) => match(r.json<Envelope>())), STEP_TIMEOUT_MS)
      .catch(() => {
        throw new Error(`no ${what} webhook within ${STEP_TIMEOUT_MS / 1000} s`);
      });
    return this.envelopes.find(match)!;
  }
}

/** The API client --keep-running prints: every permission over the demo company. */
const DEMO_GROUP = 'demo-partner';

function writeDemoConfig(dir: string, meterPort: number, webhookUrl: string, httpPort: number): string {
  const configPath = path.join(dir, 'chargegate.yaml');
  const config = {
    dataDir: path.join(dir, 'var'),
    timezone: 'Europe/Brussels',
    log: { level: 'warn' },
    // A port chosen now, so the issuer (tokens, JWKS URL) names the port the API really listens on.
    http: { host: '127.0.0.1', port: httpPort },
    // Profile 0 (no station password) is allowed because every listener is on loopback.
    ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0 },
    company: { id: 'demo' },
    sites: [
      {
        id: SITE,
        stations: [{ id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1, 2] }] }],
        meters: [
          {
            id: 'meter-1',
            chargePointId: 'MB-1',
            connectorId: 1,
            model: 'sdm630',
            connection: { type: 'tcp', host: '127.0.0.1', port: meterPort, unitId: 1 },
            pollIntervalMs: 250,
            // Seconds instead of the field defaults (10 s up, 60 s down) so the demo does not drag.
            detection: { startCurrentA: 1, startDelayS: 1, stopCurrentA: 0.5, stopDelayS: 1 },
            idTag: 'MODBUS-meter-1',
          },
        ],
        webhooks: [{ id: 'demo-partner', url: webhookUrl, events: [...EVENT_TYPES], signature: 'documented' }],
      },
    ],
    groups: [
      {
        id: DEMO_GROUP,
        scope: 'company:demo',
        permissions: ['charge-points:read', 'charge-points:control', 'events:read'],
      },
    ],
    webhookDelivery: { retryIntervalS: 1 },
  };
  writeFileSync(configPath, stringify(config));
  return configPath;
}

async function ocppSession(station: SimulatedStation, inbox: PartnerInbox): Promise<void> {
  const boot = await station.boot({ chargePointVendor: 'chargegate', chargePointModel: 'demo station' });
  say('station', `BootNotification -> ${boot.status}`);
  await station.statusNotification({ connectorId: 1, status: 'Available' });
  say('station', 'connector 1 Available');
  const auth = await station.authorize(ID_TAG);
  say('station', `Authorize ${ID_TAG} -> ${auth.status}`);
  await station.statusNotification({ connectorId: 1, status: 'Preparing' });
  const transactionId = await station.startTransaction({ connectorId: 1, idTag: ID_TAG });
  say('station', `StartTransaction -> transaction ${transactionId}`);
  await station.statusNotification({ connectorId: 1, status: 'Charging' });
  for (let i = 0; i < 3; i += 1) {
    station.addEnergy(1, 1500);
    await station.meterValues({ connectorId: 1, transactionId });
    say('station', `MeterValues +1.5 kWh (transaction ${transactionId})`);
  }
  await station.stopTransaction({ transactionId, reason: 'EVDisconnected' });
  say('station', `StopTransaction ${transactionId} (EVDisconnected)`);
  await station.statusNotification({ connectorId: 1, status: 'Available' });
  await inbox.waitFor(
    'OCPP StopTransaction',
    (e) => e.eventType === 'StopTransaction' && e.payload.transactionId === transactionId,
  );
}

/** The meter's import register when the demo starts: a meter that has been in service for a while. */
const METER_START_KWH = 1250;

async function modbusSession(meter: MeterSimulator, inbox: PartnerInbox): Promise<void> {
  let energyKWh = METER_START_KWH;
  await inbox.waitFor('meter status', (e) => e.eventType === 'ChargePointStatus' && e.payload.chargePointId === 'MB-1');
  say('meter', 'car plugged in: 16 A on three phases');
  const charging = setInterval(() => {
    energyKWh += 0.05;
    void meter.set(1, { energyKWh, currentA: [16, 16, 16], powerW: 11_000 });
  }, 250);
  try {
    await meter.set(1, { energyKWh, currentA: [16, 16, 16], powerW: 11_000 });
    const started = await inbox.waitFor(
      'Modbus StartTransaction',
      (e) => e.eventType === 'StartTransaction' && e.payload.chargePointId === 'MB-1',
    );
    say('meter', `session detected as transaction ${started.payload.transactionId}; charging for 2 s`);
    await delay(2000);
  } finally {
    clearInterval(charging);
  }
  await meter.set(1, { energyKWh, currentA: [0, 0, 0], powerW: 0 });
  say('meter', `car done: 0 A, register at ${energyKWh.toFixed(2)} kWh`);
  await inbox.waitFor(
    'Modbus StopTransaction',
    (e) => e.eventType === 'StopTransaction' && e.payload.chargePointId === 'MB-1',
  );
}

/** Waits until GET /health shows every webhook queue empty: all events so far have reached the partner. */
async function outboxDrained(httpPort: number): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const health = (await (await fetch(`http://127.0.0.1:${httpPort}/health`)).json()) as {
      webhooks?: { executors?: Array<{ queueSize: number }> };
    };
    if ((health.webhooks?.executors ?? []).every((e) => e.queueSize === 0)) return;
    if (Date.now() > deadline) throw new Error(`webhook queues not empty after ${STEP_TIMEOUT_MS / 1000} s`);
    await delay(200);
  }
}

function summary(inbox: PartnerInbox): boolean {
  const envelopes = inbox.envelopes;
  const { verified, rejected } = inbox.partner;
  const count = (type: string, chargePointId: string) =>
    envelopes.filter((e) => e.eventType === type && e.payload.chargePointId === chargePointId).length;
  console.log('\nverified webhooks by source:');
  console.log(`  ${'event type'.padEnd(18)} ${'OCPP (CP001-A)'.padEnd(15)} Modbus (MB-1)`);
  for (const type of EVENT_TYPES)
    console.log(`  ${type.padEnd(18)} ${String(count(type, 'CP001-A')).padEnd(15)} ${count(type, 'MB-1')}`);
  console.log(`  ${verified} verified, ${rejected} rejected`);
  const complete =
    ['StartTransaction', 'StopTransaction'].every((t) => count(t, 'CP001-A') === 1 && count(t, 'MB-1') === 1) &&
    count('Authorize', 'CP001-A') >= 1;
  return complete && rejected === 0 && verified === envelopes.length;
}

async function main(): Promise<number> {
  let keepRunning: boolean;
  try {
    const { values } = parseArgs({
      options: { 'keep-running': { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } },
    });
    if (values.help) {
      console.log(USAGE);
      return 0;
    }
    keepRunning = values['keep-running'];
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }

  const dir = mkdtempSync(path.join(tmpdir(), 'chargegate-demo-'));
  const cleanups: Array<() => Promise<void> | void> = [() => rmSync(dir, { recursive: true, force: true })];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await fn();
  };
  try {
    const meter = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630 } });
    cleanups.push(() => meter.close());
    await meter.set(1, { energyKWh: METER_START_KWH, currentA: [0, 0, 0], powerW: 0 });
    say('meter', `simulated SDM630 on modbus tcp://127.0.0.1:${meter.port} unit 1`);

    let daemon: Daemon | undefined;
    const partner = await startDemoReceiver({
      issuer: () => `http://127.0.0.1:${daemon!.httpPort}`,
      port: 0,
      print: (line) => say('partner', line),
    });
    cleanups.push(() => partner.receiver.close());
    const inbox = new PartnerInbox(partner);
    say('partner', `webhook receiver on ${partner.receiver.url()}, verifying against the daemon's JWKS`);

    const configPath = writeDemoConfig(dir, meter.port, partner.receiver.url(), await freePort());
    const db = openDatabase(path.join(dir, 'var'));
    putIdTag(db, { idTag: ID_TAG, status: 'Accepted', expiresAt: null, siteId: null });
    const client = new Applications({ db }).create(loadConfig(configPath), {
      name: 'demo partner',
      groupIds: [DEMO_GROUP],
    });
    db.close();
    daemon = await startDaemon({
      configPath,
      config: loadConfig(configPath),
      logger: createLogger('error'),
      handleSignals: false,
    });
    cleanups.push(() => daemon.stop());
    say(
      'daemon',
      `chargegate ready: status page http://127.0.0.1:${daemon.httpPort}/  OCPP ws://127.0.0.1:${daemon.ocppPort}/ocpp/CP001`,
    );

    const station = await connectStation(`ws://127.0.0.1:${daemon.ocppPort}/ocpp`, 'CP001', undefined, {
      initialMeterWh: 7_250,
    });
    cleanups.push(() => station.close());
    console.log('\n--- an OCPP charging session: authorize, start, meter values, stop ---');
    await ocppSession(station, inbox);
    console.log('\n--- a Modbus-detected session on a charger without OCPP ---');
    await modbusSession(meter, inbox);
    await outboxDrained(daemon.httpPort);

    const ok = summary(inbox);
    if (keepRunning) {
      const base = `http://127.0.0.1:${daemon.httpPort}`;
      console.log(
        [
          `\nstill running: status page ${base}/, OCPP ws://127.0.0.1:${daemon.ocppPort}/ocpp. Ctrl-C to stop.`,
          `config: ${configPath}`,
          `  try: node dist/cli/main.js --config ${configPath} station list`,
          `API client: clientId ${client.clientId} clientSecret ${client.clientSecret}`,
          `  try: curl -s -u ${client.clientId}:${client.clientSecret} -d grant_type=client_credentials ${base}/oauth2/token`,
          `       curl -s -H "Authorization: Bearer <access_token>" ${base}/charge-points`,
        ].join('\n'),
      );
      await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()).once('SIGTERM', () => resolve()));
    }
    await cleanup();
    console.log(
      ok
        ? '\ndemo complete: every session reached the partner, every signature verified'
        : '\ndemo incomplete: see above',
    );
    return ok ? 0 : 1;
  } catch (err) {
    console.error(`\ndemo failed: ${(err as Error).message}`);
    await cleanup().catch(() => undefined);
    return 1;
  }
}

process.exitCode = await main();
