import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function npmRunDemo(): Promise<Run> {
  return new Promise((resolve) => {
    execFile('npm', ['run', '--silent', 'demo'], { cwd: ROOT, timeout: 120_000, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr });
    });
  });
}

describe('npm run demo', () => {
  it('runs an OCPP and a Modbus session, shows every webhook verified, and exits 0', async () => {
    const run = await npmRunDemo();
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);

    const verified = run.stdout.split('\n').filter((line) => line.startsWith('[partner]  verified (kid sign) '));
    const from = (eventType: string, chargePointId: string) => verified.filter((line) => new RegExp(`\\) ${eventType} +${chargePointId}\\b`).test(line));
    // Both sources, the whole cycle: authorize (OCPP), start, stop; the meter's kWh come from its register.
    expect(from('Authorize', 'CP001-A').length).toBeGreaterThanOrEqual(1);
    expect(from('StartTransaction', 'CP001-A')).toHaveLength(1);
    expect(from('StopTransaction', 'CP001-A')[0]).toMatch(/meterStart 7\.25 kWh, meterStop 11\.75 kWh, reason EVDisconnected/);
    expect(from('StartTransaction', 'MB-1')[0]).toMatch(/meterStart 1250 kWh/);
    expect(from('StopTransaction', 'MB-1')).toHaveLength(1);
    expect(from('ChargePointStatus', 'CP001-A').length).toBeGreaterThanOrEqual(1);
    expect(run.stdout).toMatch(/\d+ verified, 0 rejected/);
    expect(run.stdout).toContain('demo complete: every session reached the partner, every signature verified');
    expect(run.stdout).not.toContain('REJECTED');
  }, 150_000);
});
