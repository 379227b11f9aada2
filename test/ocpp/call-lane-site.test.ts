import { describe, expect, it, onTestFinished } from 'vitest';
import { apiDaemonForTest, type ApiDaemon } from '../http/api-harness.js';
import { charging, inBrussels, limitsOn, temporaryLimitSite } from '../load/temporary-limit-site.js';
import { TestCsms } from '../support/csms.js';
import { opensslKeyAndCsr } from '../support/csr.js';
import { eventually } from '../support/daemon.js';
import { stationV201ForTest, tempDirForTest } from '../support/for-test.js';
import { MovableLoadClock } from '../support/load-clock.js';
import { externalTool } from '../support/meter-simulator.js';
import type { SimulatedStation } from '../support/station.js';
import { UPLINK_WAIT_MS, uplinkConfig } from '../support/uplink.js';

/*
 * Issue 41 row 2, end to end on an in-process daemon: ocpp-rpc's strict RPCServer as the operator's CSMS sends calls
 * toward CP001 through its uplink, while load management must lower CP001's limit (a circuit step, a temporary limit
 * through the API). CP003, on another site, is the station that must not notice.
 */

/** The flood: 200 CSMS calls toward one station at once. */
const FLOOD = 200;
/** How long CP001 takes to answer a relayed GetConfiguration: 200 of them in a row hold the lane 20 s. */
const STATION_ANSWER_MS = 100;
/** #41: a limit reaches the station within 2 s plus its own answer time, whatever the CSMS has sent toward it. */
const LIMIT_WITHIN_MS = 2_000;
/** #41: another station's Heartbeat and /health answer within 1 s throughout. */
const BYSTANDER_WITHIN_MS = 1_000;

/**
 * The temporary-limit site under the CSMS, with ocpp.callTimeoutMs at its default (a call unanswered for 30 s), on a
 * load clock the test moves for raises (clock.meanwhile); limits reach the stations in real time.
 */
async function siteUnderCsms(): Promise<{ api: ApiDaemon; csms: TestCsms; ops: string; clock: MovableLoadClock }> {
  // The CSMS sends its calls at once, not one at a time as OCPP-J asks.
  const csms = await TestCsms.startForTest({ callConcurrency: FLOOD });
  const site = temporaryLimitSite();
  const clock = new MovableLoadClock();
  const api = await apiDaemonForTest(
    { ...site, ...uplinkConfig(csms), ocpp: { ...(site.ocpp as object), callTimeoutMs: 30_000 } },
    { loadClock: clock },
  );
  return { api, csms, ops: await api.token(api.createApp('ops')), clock };
}

/** A call from the CSMS to CP001's uplink; settles as 'answered' (the station's answer) or the CALLERROR's code. */
function csmsCall(csms: TestCsms, action: string, params: object): Promise<string> {
  return csms.call('CP001', action, params).then(
    () => 'answered',
    (err: { rpcErrorCode?: string }) => err.rpcErrorCode ?? 'failed',
  );
}

/** `count` GetConfiguration calls from the CSMS to CP001 at once. */
function csmsCalls(csms: TestCsms, count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, () => csmsCall(csms, 'GetConfiguration', { key: ['HeartbeatInterval'] })),
  );
}

/**
 * The slowest answer of the other station's Heartbeat and of GET /health, sampled until stop() is called (or the test
 * ends without it).
 */
function bystander(api: ApiDaemon, station: SimulatedStation): { stop(): Promise<number> } {
  let sampling = true;
  onTestFinished(() => {
    sampling = false;
  });
  let slowestMs = 0;
  const timed = async (what: () => Promise<unknown>): Promise<void> => {
    const started = performance.now();
    await what();
    slowestMs = Math.max(slowestMs, performance.now() - started);
  };
  const running = (async () => {
    while (sampling) {
      await Promise.all([
        timed(() => station.heartbeat()),
        timed(async () => expect((await fetch(`${api.baseUrl}/health`)).status).toBe(200)),
      ]);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      sampling = false;
      await running;
      return slowestMs;
    },
  };
}

/** The daemon's Prometheus metrics (open on a loopback listener). */
async function metrics(api: ApiDaemon): Promise<string> {
  return (await fetch(`${api.baseUrl}/metrics`)).text();
}

/** How long after `from` CP001's connector 1 holds `limitA`; fails after LIMIT_WITHIN_MS plus the answer time. */
async function limitReached(
  clock: MovableLoadClock,
  station: Pick<SimulatedStation, 'limitA'>,
  limitA: number,
  from: number,
): Promise<number> {
  await expect
    .poll(limitsOn(clock, station), { timeout: LIMIT_WITHIN_MS + STATION_ANSWER_MS, interval: 10 })
    .toEqual([limitA]);
  return performance.now() - from;
}

describe("a station's call lane (issue 41: load management's limits never wait behind the CSMS's calls)", () => {
  it('a circuit step and a temporary limit reach the station within 2 s while the CSMS floods it with 200 calls', async () => {
    const { api, csms, ops, clock } = await siteUnderCsms();
    const [a, b, c] = [await api.connect('CP001'), await api.connect('CP002'), await api.connect('CP003')];
    await c.boot();
    await charging(a);
    await eventually(() => csms.isConnected('CP001'), UPLINK_WAIT_MS, "CP001's uplink");
    await expect.poll(clock.meanwhile(limitsOn(clock, a)), { timeout: 10_000 }).toEqual([24]);
    a.handle('GetConfiguration', async () => {
      await new Promise((resolve) => setTimeout(resolve, STATION_ANSWER_MS));
      return { configurationKey: [{ key: 'HeartbeatInterval', readonly: false, value: '300' }] };
    });
    const relayed = () => a.received.filter((r) => r.action === 'GetConfiguration').length;
    const watch = bystander(api, c);

    // A circuit step: CP002 starts charging, CP001 must come down to half of the circuit's 24 A.
    const firstFlood = csmsCalls(csms, FLOOD);
    await eventually(() => relayed() > 0, 10_000, 'the flood reaching CP001');
    await b.boot();
    const stepAt = performance.now();
    await b.startTransaction({ connectorId: 1, idTag: 'TAG-2' });
    const stepMs = await limitReached(clock, a, 12, stepAt);

    // A temporary limit of 16 A through the API: 8 A each.
    const before = relayed();
    const secondFlood = csmsCalls(csms, FLOOD);
    await eventually(() => relayed() > before, 10_000, 'the second flood reaching CP001');
    const limitAt = performance.now();
    const put = await api.call('PUT', '/sites/s1/circuits/main/limit', {
      token: ops,
      body: { maxCurrentA: 16, until: inBrussels(Date.now() + 3_600_000) },
    });
    expect(put.status).toBe(200);
    const limitMs = await limitReached(clock, a, 8, limitAt);

    const outcomes = [...(await firstFlood), ...(await secondFlood)];
    const slowestMs = await watch.stop();
    // The CSMS hears back about every call: the station's answer for the one in progress, a CALLERROR for those sent
    // beside it (the link takes one CSMS call at a time, so the lane never holds more than one relay of it).
    const count = (outcome: string) => outcomes.filter((o) => o === outcome).length;
    expect(count('answered') + count('GenericError')).toBe(2 * FLOOD);
    expect(count('GenericError')).toBeGreaterThan(0);
    const refusedByLink = api
      .logged('CSMS sent calls while one was in progress: answered GenericError')
      .reduce((sum, line) => sum + Number(line.refused), 0);
    expect(refusedByLink).toBe(count('GenericError'));
    expect(await metrics(api)).not.toContain('reason="queue_full"');
    expect(stepMs).toBeLessThan(LIMIT_WITHIN_MS + STATION_ANSWER_MS);
    expect(limitMs).toBeLessThan(LIMIT_WITHIN_MS + STATION_ANSWER_MS);
    expect(slowestMs).toBeLessThan(BYSTANDER_WITHIN_MS);
  }, 60_000);

  it('a temporary limit reaches the station within 2 s while it leaves a relayed call unanswered; its late answer is harmless', async () => {
    const { api, csms, ops, clock } = await siteUnderCsms();
    const [a, b, c] = [await api.connect('CP001'), await api.connect('CP002'), await api.connect('CP003')];
    await c.boot();
    await charging(a, b);
    await eventually(() => csms.isConnected('CP001'), UPLINK_WAIT_MS, "CP001's uplink");
    await expect.poll(clock.meanwhile(limitsOn(clock, a)), { timeout: 10_000 }).toEqual([12]);
    let answerLate = (): void => undefined;
    a.handle(
      'DataTransfer',
      (_params, signal) =>
        new Promise((resolve) => {
          answerLate = () => resolve({ status: 'Accepted' });
          signal.addEventListener('abort', answerLate);
        }),
    );
    const watch = bystander(api, c);

    const unanswered = csmsCall(csms, 'DataTransfer', { vendorId: 'acme' });
    await eventually(() => a.received.some((r) => r.action === 'DataTransfer'), 10_000, 'the call reaching CP001');
    const limitAt = performance.now();
    const put = await api.call('PUT', '/sites/s1/circuits/main/limit', {
      token: ops,
      body: { maxCurrentA: 16, until: inBrussels(Date.now() + 3_600_000) },
    });
    expect(put.status).toBe(200);
    const limitMs = await limitReached(clock, a, 8, limitAt);
    expect(limitMs).toBeLessThan(LIMIT_WITHIN_MS + STATION_ANSWER_MS);
    // The CSMS hears that its call was given up, once the lane had to.
    expect(await unanswered).toBe('GenericError');
    expect(api.logged('call given up: the station did not answer while a load limit waited')).toEqual([
      expect.objectContaining({ stationId: 'CP001', action: 'DataTransfer', callClass: 'relay' }),
    ]);
    expect(await metrics(api)).toContain(
      'chargegate_ocpp_station_calls_dropped_total{station="CP001",reason="given_up"} 1',
    );

    // The station answers after all: ocpp-rpc no longer waits for it; the link and the lane carry on.
    answerLate();
    expect(await csms.call('CP001', 'GetConfiguration', { key: ['HeartbeatInterval'] })).toMatchObject({
      configurationKey: [{ key: 'HeartbeatInterval', value: '300' }],
    });
    expect(api.logged('answer to a call no longer waited for (given up or timed out)')).toEqual([
      expect.objectContaining({ stationId: 'CP001', messageId: expect.any(String) }),
    ]);
    expect(api.logged('malformed frame from station')).toEqual([]);
    const cleared = await fetch(`${api.baseUrl}/sites/s1/circuits/main/limit`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ops}` },
    });
    expect(cleared.status).toBe(204);
    await expect.poll(clock.meanwhile(limitsOn(clock, a)), { timeout: 10_000 }).toEqual([12]);
    expect(await a.heartbeat()).toHaveProperty('currentTime');
    expect(await watch.stop()).toBeLessThan(BYSTANDER_WITHIN_MS);
  }, 60_000);

  it.skipIf(!externalTool('openssl', ['version']))(
    'a 2.0.1 station that leaves the CertificateSigned it asked for unanswered gets its lowered limit within 2 s',
    async () => {
      const { api, ops, clock } = await siteUnderCsms();
      const ev = await stationV201ForTest(api.url, 'CP001');
      const b = await api.connect('CP002');
      await ev.boot();
      await ev.transactionEvent('Started', ev.newTransactionId(), {
        evseId: 1,
        idToken: 'TAG-1',
        chargingState: 'Charging',
      });
      await charging(b);
      await expect.poll(clock.meanwhile(limitsOn(clock, ev)), { timeout: 10_000 }).toEqual([12]);
      let certificateArrived = false;
      ev.handle('CertificateSigned', () => {
        certificateArrived = true;
        return new Promise(() => undefined);
      });

      const { csr } = opensslKeyAndCsr(tempDirForTest('csr'), 'cp001', 'CP001');
      expect(await ev.call('SignCertificate', { csr })).toEqual({ status: 'Accepted' });
      await eventually(() => certificateArrived, 10_000, 'CertificateSigned reaching CP001');
      const limitAt = performance.now();
      const put = await api.call('PUT', '/sites/s1/circuits/main/limit', {
        token: ops,
        body: { maxCurrentA: 16, until: inBrussels(Date.now() + 3_600_000) },
      });
      expect(put.status).toBe(200);
      expect(await limitReached(clock, ev, 8, limitAt)).toBeLessThan(LIMIT_WITHIN_MS + STATION_ANSWER_MS);
      await eventually(
        () => api.logged('CertificateSigned not taken by the station').length > 0,
        10_000,
        'the given-up CertificateSigned logged',
      );
    },
    60_000,
  );
});
