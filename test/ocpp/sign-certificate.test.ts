import { describe, expect, it } from 'vitest';
import { SIGN_CERTIFICATE_PER_STATION_PER_MINUTE } from '../../src/ocpp/index.js';
import { daemonForTest, siteWith } from '../support/daemon.js';
import { opensslKeyAndCsr } from '../support/csr.js';
import { stationV201ForTest, tempDirForTest } from '../support/for-test.js';
import { externalTool } from '../support/meter-simulator.js';

/** Two paired 2.0.1 stations: one sends a hostile request, the other goes on with its day. */
const STATIONS = [
  { id: 'EV201', chargePoints: [{ id: 'EV201-A', connectors: [1] }] },
  { id: 'EV202', chargePoints: [{ id: 'EV202-A', connectors: [1] }] },
];

describe.skipIf(!externalTool('openssl', ['version']))('SignCertificate from a hostile station (issue 35)', () => {
  it('a station sending SignCertificate in a loop is answered Rejected, unparsed, past the limit, with one warning; another station still gets its certificate', async () => {
    const t = await daemonForTest({ ...siteWith([], STATIONS), log: { level: 'info' } });
    const looping = await stationV201ForTest(t.url, 'EV201');
    const other = await stationV201ForTest(t.url, 'EV202');
    await looping.boot();
    await other.boot();
    const dir = tempDirForTest('csr');
    const csr = opensslKeyAndCsr(dir, 'ev201', 'EV201').csr;

    const answers = [];
    for (let i = 0; i < SIGN_CERTIFICATE_PER_STATION_PER_MINUTE; i += 1)
      answers.push(await looping.call('SignCertificate', { csr }));
    expect(answers).toEqual(Array(SIGN_CERTIFICATE_PER_STATION_PER_MINUTE).fill({ status: 'Accepted' }));
    // Past the limit even garbage is not read: no CSR refusal is logged for it.
    expect(await looping.call('SignCertificate', { csr })).toEqual({ status: 'Rejected' });
    expect(await looping.call('SignCertificate', { csr: 'garbage' })).toEqual({ status: 'Rejected' });
    // Reconnecting does not start a new count.
    await looping.close();
    const reconnected = await stationV201ForTest(t.url, 'EV201');
    expect(await reconnected.call('SignCertificate', { csr })).toEqual({ status: 'Rejected' });

    expect(await other.call('SignCertificate', { csr: opensslKeyAndCsr(dir, 'ev202', 'EV202').csr })).toEqual({
      status: 'Accepted',
    });
    expect(
      t.logged(
        'SignCertificate refused: too many from this station in a minute; more this minute are refused unlogged',
      ),
    ).toEqual([
      expect.objectContaining({ level: 40, stationId: 'EV201', limit: SIGN_CERTIFICATE_PER_STATION_PER_MINUTE }),
    ]);
    expect(t.logged('SignCertificate refused')).toEqual([]);
  });
});
