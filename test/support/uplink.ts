import { expect } from 'vitest';
import type { TestCsms } from './csms.js';
import { daemonForTest, eventually, siteWith, type TestDaemon } from './daemon.js';
import type { ManualClock } from './fake-link-client.js';
import type { SimulatedStation } from './station.js';
import type { StationV201 } from './station-v201.js';

/*
 * What the uplink tests share (test/uplink/): the config, a 1.6 charging session, the transaction messages a CSMS
 * received and the checks every replay must pass.
 */

/** How long an uplink test waits for the CSMS to get something (a replay on a loaded machine). */
export const UPLINK_WAIT_MS = 30_000;

/** upstream.csms toward the test CSMS, profile 0, retrying a refused message quickly. */
export function uplinkConfig(csms: TestCsms, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    upstream: {
      timeoutMs: 2000,
      csms: { url: csms.url, securityProfile: 0, transactionMessageRetryIntervalS: 0.05, ...extra },
    },
  };
}

/**
 * The charging-profile tests' site, linked to `csms`: every charge point of `managed` on circuit `main` (raises after
 * 0.2 s, profiles valid 300 s), and station `unmanaged` (one connector) on no circuit.
 */
export function circuitSiteUnderCsms(
  csms: TestCsms,
  managed: { id: string; chargePoints: Array<{ id: string; connectors: number[] }> },
  unmanaged: string,
  maxCurrentA: number,
): Record<string, unknown> {
  return {
    sites: [
      {
        id: 's1',
        stations: [managed, { id: unmanaged, chargePoints: [{ id: `${unmanaged}-A`, connectors: [1] }] }],
        meters: [],
        webhooks: [],
        circuits: [{ id: 'main', maxCurrentA, chargePoints: managed.chargePoints.map((cp) => cp.id) }],
      },
    ],
    loadManagement: { minCurrentA: 6, raiseAfterS: 0.2, profileValidityS: 300 },
    ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0, callTimeoutMs: 2000 },
    ...uplinkConfig(csms),
  };
}

/**
 * The test site's daemon linked to `csms` (with these upstream.csms settings), stopped after the test, and its
 * station CP001 connected and booted. `stations` configures more than CP001 (connected by the test); `config`, more
 * top-level keys.
 */
export async function linkedSite(
  csms: TestCsms,
  extra: Record<string, unknown> = {},
  stations?: Array<Record<string, unknown>>,
  config: Record<string, unknown> = {},
): Promise<{ t: TestDaemon; station: SimulatedStation }> {
  const t = await daemonForTest({ ...siteWith([], stations), ...uplinkConfig(csms, extra), ...config });
  const station = await t.connect();
  await station.boot();
  return { t, station };
}

/** A 2.0.1 station of the site config, an EVSE per charge point. */
export const EV201 = {
  id: 'EV201',
  chargePoints: [
    { id: 'EV201-A', connectors: [1] },
    { id: 'EV201-B', connectors: [2] },
  ],
};

/** One charging session on a 1.6 station: start, a periodic reading, stop. Returns chargegate's transaction id. */
export async function session(
  station: SimulatedStation,
  n: number,
  connectorId = 1,
  idTag = `TAG-${n}`,
): Promise<number> {
  const transactionId = await station.startTransaction({ connectorId, idTag, meterStart: n * 10_000 });
  await station.meterValues({ connectorId, transactionId, wh: n * 10_000 + 500 });
  await station.stopTransaction({ transactionId, meterStop: n * 10_000 + 1000, reason: 'EVDisconnected' });
  return transactionId;
}

/**
 * One transaction on a 2.0.1 station's EVSE 1: Started with the token, a periodic reading, Ended; the register at `wh`,
 * then 500 and 1000 Wh more.
 */
export async function session201(station: StationV201, id: string, wh: number, idToken = 'TAG-201'): Promise<void> {
  station.meterWh = wh;
  await station.transactionEvent('Started', id, { evseId: 1, idToken, chargingState: 'Charging' });
  station.meterWh = wh + 500;
  await station.transactionEvent('Updated', id, { triggerReason: 'MeterValuePeriodic' });
  station.meterWh = wh + 1000;
  await station.transactionEvent('Ended', id, { stoppedReason: 'EVDisconnected' });
}

/** A transaction message as the CSMS received it, keyed by what tells it apart from the others of its station. */
export interface ReceivedTransactionMessage {
  action: string;
  /** meterStart, the first sampled value, or meterStop (1.6); the register in the event's first reading (2.0.1). */
  value: number;
  /** `action value` (1.6) or `eventType transactionId value` (2.0.1). */
  key: string;
  params: Record<string, unknown>;
  answer?: Record<string, unknown>;
}

/** The 1.6 StartTransaction, MeterValues and StopTransaction the CSMS received from a station, in order. */
export function transactionMessages16(csms: TestCsms, identity = 'CP001'): ReceivedTransactionMessage[] {
  return csms.received
    .filter((m) => m.identity === identity && ['StartTransaction', 'MeterValues', 'StopTransaction'].includes(m.action))
    .map((m) => {
      const p = m.params as {
        meterStart?: number;
        meterStop?: number;
        meterValue?: Array<{ sampledValue: Array<{ value: string }> }>;
      };
      const value = p.meterStart ?? p.meterStop ?? Number(p.meterValue?.[0]?.sampledValue[0]?.value);
      return { action: m.action, value, key: `${m.action} ${value}`, params: m.params, answer: m.answer };
    });
}

/** The 2.0.1 TransactionEvents the CSMS received from a station, in order. */
export function transactionEvents201(csms: TestCsms, identity: string): ReceivedTransactionMessage[] {
  return csms.received
    .filter((m) => m.identity === identity && m.action === 'TransactionEvent')
    .map((m) => {
      const p = m.params as {
        eventType: string;
        transactionInfo: { transactionId: string };
        meterValue?: Array<{ sampledValue: Array<{ value: number }> }>;
      };
      const value = Number(p.meterValue?.[0]?.sampledValue[0]?.value);
      return {
        action: m.action,
        value,
        key: `${p.eventType} ${p.transactionInfo.transactionId} ${value}`,
        params: m.params,
        answer: m.answer,
      };
    });
}

/**
 * At least once, in order: the messages, their repeats left out, are `keys` exactly, and a repeat has the same
 * content as the first (but for `ignored` fields, such as a 1.6 transactionId the CSMS gave anew to a repeated start).
 */
export function expectInOrderOnceOrRepeatedAlike(
  received: readonly ReceivedTransactionMessage[],
  keys: readonly string[],
  ignored: readonly string[] = [],
): void {
  const distinct = received.filter((m, i) => received.findIndex((o) => o.key === m.key) === i);
  expect(distinct.map((m) => m.key)).toEqual(keys);
  const contents = new Map<string, string>();
  for (const m of received) {
    const content = JSON.stringify(Object.fromEntries(Object.entries(m.params).filter(([k]) => !ignored.includes(k))));
    const seen = contents.get(m.key);
    if (seen) expect(content, `the repeat of ${m.key}`).toBe(seen);
    contents.set(m.key, content);
  }
}

/** Each 1.6 MeterValues and StopTransaction names the id the CSMS answered the latest StartTransaction before it with. */
export function expectCsmsTransactionIds(received: readonly ReceivedTransactionMessage[]): void {
  let lastStartId: unknown;
  for (const m of received) {
    if (m.action === 'StartTransaction') lastStartId = m.answer?.transactionId;
    else expect(m.params.transactionId, m.key).toBe(lastStartId);
  }
}

/** The `upstream` part of GET /health. */
export async function upstreamHealth(httpPort: number): Promise<Record<string, unknown>> {
  const response = await fetch(`http://127.0.0.1:${httpPort}/health`);
  return ((await response.json()) as Record<string, Record<string, unknown>>).upstream as Record<string, unknown>;
}

/**
 * The waits the station's link sets on its clock between tries, `count` of them, each let run out once set: the link
 * has nothing else on its clock while it waits, and with the clock still, nothing is tried before its wait is over.
 */
export async function waitsBetweenTries(clock: ManualClock, count: number): Promise<number[]> {
  const waits: number[] = [];
  while (waits.length < count) {
    const set = await eventually(() => clock.waits().length > 0 && clock.waits(), UPLINK_WAIT_MS, 'the link waiting');
    expect(set).toHaveLength(1);
    waits.push(set[0]!);
    await clock.advance(set[0]!);
  }
  return waits;
}
