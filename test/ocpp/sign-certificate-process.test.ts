import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { PROCESS_TEST_TIMEOUT_MS, siteWith } from '../support/daemon.js';
import { opensslKeyAndCsr, oversizedRsaCsr } from '../support/csr.js';
import { spawnDaemonForTest, stationV201ForTest, tempDirForTest, tempSiteForTest } from '../support/for-test.js';
import { externalTool } from '../support/meter-simulator.js';

/** The daemon in its own process (vitest.config.ts, system lane). Two paired 2.0.1 stations: one sends a hostile request, the other goes on with its day. */
const STATIONS = [
  { id: 'EV201', chargePoints: [{ id: 'EV201-A', connectors: [1] }] },
  { id: 'EV202', chargePoints: [{ id: 'EV202-A', connectors: [1] }] },
];

describe.skipIf(!externalTool('openssl', ['version']))('SignCertificate from a hostile station (issue 35)', () => {
  it(
    'a CSR with an 8192-bit key and a huge exponent is answered Rejected with a warning, and stalls neither the other station nor /health',
    async () => {
      // Its own process: the test's clock and sockets must keep running if the daemon's event loop does not.
      const temp = tempSiteForTest({ ...siteWith([], STATIONS), log: { level: 'info' } });
      const daemon = await spawnDaemonForTest(temp.configPath, { readyTimeoutMs: 60_000 });
      const hostile = await stationV201ForTest(daemon.ready.ocppUrl, 'EV201');
      const neighbour = await stationV201ForTest(daemon.ready.ocppUrl, 'EV202');
      await hostile.boot();
      await neighbour.boot();
      const csr = oversizedRsaCsr(opensslKeyAndCsr(tempDirForTest('csr'), 'ev201', 'EV201').csr);
      expect(csr.length).toBeLessThanOrEqual(5500);

      const sent = performance.now();
      const answer = hostile.call('SignCertificate', { csr, certificateType: 'ChargingStationCertificate' });
      let settled = false;
      answer.then(
        () => (settled = true),
        () => (settled = true),
      );
      // The neighbour's Heartbeat and /health, one after the other, while the request is in flight and a little after.
      const roundTripsMs: number[] = [];
      while (!settled || performance.now() - sent < 1000) {
        const start = performance.now();
        await neighbour.call('Heartbeat', {});
        await fetch(`http://127.0.0.1:${daemon.ready.httpPort}/health`);
        roundTripsMs.push(performance.now() - start);
        await sleep(50);
      }
      expect(Math.max(...roundTripsMs)).toBeLessThan(1000);
      await expect(answer).resolves.toEqual({ status: 'Rejected' });

      const logLines = daemon.logs
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(logLines.filter((l) => l.msg === 'SignCertificate refused')).toEqual([
        expect.objectContaining({
          level: 40,
          stationId: 'EV201',
          reason: expect.stringMatching(/^an RSA key of 8192 bits/),
        }),
      ]);
      expect(logLines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
