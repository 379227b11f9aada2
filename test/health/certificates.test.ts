import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, fetch } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import { certificateHealth } from '../../src/health/index.js';
import { createGatewayCertificate } from '../../src/keystore/index.js';
import { daemonForTest, siteWith } from '../support/daemon.js';
import { tempDirForTest } from '../support/for-test.js';
import { freePort } from '../support/free-port.js';

const DAY_MS = 86_400_000;

/** A certificate issued `issuedDaysAgo` days ago, valid `validDays` from then. */
async function certificate(
  issuedDaysAgo: number,
  validDays: number,
): Promise<{ certificate: string; privateKey: string }> {
  return createGatewayCertificate({
    names: ['localhost', '127.0.0.1'],
    validDays,
    now: new Date(Date.now() - issuedDaysAgo * DAY_MS),
  });
}

describe('TLS certificate expiry on GET /health', () => {
  it('is ok with a month or more left, a warning within 30 days, critical once expired or before it is valid', async () => {
    const file = 'cert.pem';
    const level = async (issuedDaysAgo: number, validDays: number) =>
      certificateHealth({ listener: 'ocpp', file, pem: (await certificate(issuedDaysAgo, validDays)).certificate });
    expect(await level(0, 90)).toMatchObject({ status: 'ok', daysLeft: 89 });
    expect(await level(0, 10)).toMatchObject({ status: 'warning', daysLeft: 9 });
    expect(await level(400, 365)).toMatchObject({ status: 'critical' });
    expect(await level(-2, 365)).toMatchObject({ status: 'critical' });
  });

  it('names each listener certificate with its end; an expired one makes /health critical (503)', async () => {
    const dir = tempDirForTest('certs');
    const files = (name: string, pair: { certificate: string; privateKey: string }) => {
      const cert = path.join(dir, `${name}.crt`);
      const key = path.join(dir, `${name}.key`);
      writeFileSync(cert, pair.certificate);
      writeFileSync(key, pair.privateKey, { mode: 0o600 });
      return { cert, key };
    };
    const ocppTls = files('ocpp', await certificate(0, 10));
    const httpTls = files('http', await certificate(400, 365));
    const port = await freePort();
    await daemonForTest({
      ...siteWith(),
      http: { host: '127.0.0.1', port, tls: httpTls },
      ocpp: { host: '127.0.0.1', port: 0, securityProfile: 2, tls: ocppTls },
    });
    // The partner's view of an expired certificate: refused. An installer's check of /health looks past it.
    const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
    onTestFinished(() => dispatcher.close());
    const response = await fetch(`https://127.0.0.1:${port}/health`, { dispatcher });
    expect(response.status).toBe(503);
    const health = (await response.json()) as {
      status: string;
      certificates: { status: string; certificates: unknown[] };
    };
    expect(health.status).toBe('critical');
    expect(health.certificates.status).toBe('critical');
    expect(health.certificates.certificates).toEqual([
      expect.objectContaining({ listener: 'ocpp', file: ocppTls.cert, status: 'warning', daysLeft: 9 }),
      expect.objectContaining({ listener: 'http', file: httpTls.cert, status: 'critical', daysLeft: -35 }),
    ]);
  });
});
