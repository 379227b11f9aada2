import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { ROOT, runCliJson } from '../support/cli.js';
import { eventually } from '../support/daemon.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function npmRunDemo(): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', 'demo'],
      { cwd: ROOT, timeout: 120_000, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr });
      },
    );
  });
}

describe('npm run demo', () => {
  it('runs an OCPP and a Modbus session, shows every webhook verified, and exits 0', async () => {
    const run = await npmRunDemo();
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);

    // The demo receiver's line: verified (kid sign) <eventType> <eventId> site <siteId> at <timestamp> <payload JSON>
    const verified = run.stdout
      .split('\n')
      .map((line) =>
        /^\[partner\] +verified \(kid sign\) (\w+) [0-9a-f-]{36} site demo-site at \S+ (\{.*\})$/.exec(line),
      )
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ eventType: m[1]!, payload: JSON.parse(m[2]!) as Record<string, unknown> }));
    const from = (eventType: string, chargePointId: string) =>
      verified
        .filter((e) => e.eventType === eventType && e.payload.chargePointId === chargePointId)
        .map((e) => e.payload);
    // Both sources, the whole cycle: authorize (OCPP), start, stop; the meter's kWh come from its register.
    const time = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/);
    expect(from('Authorize', 'CP001-A')[0]).toMatchObject({
      stationId: 'CP001',
      idTag: 'DEMO-TAG-1',
      status: 'Accepted',
    });
    expect(from('StartTransaction', 'CP001-A')).toEqual([
      {
        stationId: 'CP001',
        chargePointId: 'CP001-A',
        connectorId: 1,
        idTag: 'DEMO-TAG-1',
        meterStart: 7.25,
        transactionId: 1,
        startedAt: time,
      },
    ]);
    expect(from('StopTransaction', 'CP001-A')).toEqual([
      {
        stationId: 'CP001',
        chargePointId: 'CP001-A',
        connectorId: 1,
        idTag: 'DEMO-TAG-1',
        meterStart: 7.25,
        meterStop: 11.75,
        transactionId: 1,
        reason: 'EVDisconnected',
        startedAt: time,
        stoppedAt: time,
      },
    ]);
    // The meter's register moves every 250 ms while the car charges, so the start is whatever the detector read at
    // the first current above its threshold: at or above the register the demo started from, below the stop.
    expect(from('StartTransaction', 'MB-1')).toEqual([
      {
        stationId: 'meter-1',
        chargePointId: 'MB-1',
        connectorId: 1,
        idTag: 'MODBUS-meter-1',
        meterStart: expect.any(Number),
        transactionId: 2,
        startedAt: time,
      },
    ]);
    const [modbusStart] = from('StartTransaction', 'MB-1');
    const [modbusStop] = from('StopTransaction', 'MB-1');
    expect(modbusStart!.meterStart as number).toBeGreaterThanOrEqual(1250);
    expect(modbusStop).toMatchObject({ stationId: 'meter-1', transactionId: 2, meterStart: modbusStart!.meterStart });
    expect(modbusStop!.meterStop as number).toBeGreaterThan(modbusStart!.meterStart as number);
    // The stop is read once the car is done and the register stands still: the value the meter announced.
    const register = /\[meter\] +car done: 0 A, register at ([\d.]+) kWh/.exec(run.stdout);
    expect(register, run.stdout).not.toBeNull();
    expect(modbusStop!.meterStop as number).toBeCloseTo(Number(register![1]), 2);
    expect(from('ChargePointStatus', 'CP001-A').map((p) => p.status)).toEqual(
      expect.arrayContaining(['Available', 'Preparing', 'Charging']),
    );
    expect(run.stdout).toMatch(/\d+ verified, 0 rejected/);
    expect(run.stdout).toContain('demo complete: every session reached the partner, every signature verified');
    expect(run.stdout).not.toContain('REJECTED');
  }, 150_000);

  it('--keep-running stays up after the sessions and prints a config and an API client that work from the CLI and over HTTP', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/demo.ts'), '--keep-running'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
    try {
      const line = (prefix: string) =>
        eventually(() => lines.find((l) => l.startsWith(prefix)), 90_000, `a line starting "${prefix}"`);
      const configPath = (await line('config: ')).slice('config: '.length);
      const [, clientId, clientSecret] = /^API client: clientId (\S+) clientSecret (\S+)$/.exec(
        await line('API client: '),
      )!;
      const base = /(http:\/\/127\.0\.0\.1:\d+)\/oauth2\/token$/.exec(await line('  try: curl -s -u'))![1]!;

      const stations = await runCliJson<{ stations: Array<{ id: string }> }>([
        'station',
        'list',
        '--config',
        configPath,
      ]);
      expect(stations.data.stations.map((s) => s.id)).toContain('CP001');
      const token = (await (
        await fetch(`${base}/oauth2/token`, {
          method: 'POST',
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: clientId!,
            client_secret: clientSecret!,
          }),
        })
      ).json()) as { access_token: string };
      const chargePoints = await fetch(`${base}/charge-points`, {
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      expect(chargePoints.status).toBe(200);
      expect(((await chargePoints.json()) as Array<{ chargePointId: string }>).map((cp) => cp.chargePointId)).toEqual([
        'CP001-A',
        'MB-1',
      ]);

      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number];
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 120_000);
});
