import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiDaemonForTest } from '../http/api-harness.js';
import { runCli, runCliJson } from '../support/cli.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import { tempDirForTest } from '../support/for-test.js';
import { uploadsDiagnostics16 } from '../station-logs/uploading-station.js';

/** `chargegate station logs` (contract 11.3) against a running daemon and a 1.6 station that uploads for real. */
describe('chargegate station logs', () => {
  it(
    'waits for the upload and says where the file is (or copies it with --out); exit 1 saying why it failed',
    async () => {
      const api = await apiDaemonForTest({
        sites: [{ id: 's1', stations: [{ id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1] }] }] }],
        groups: [],
      });
      const station = await api.connect('CP001');
      await station.boot();
      const config = ['--config', api.temp.configPath];

      uploadsDiagnostics16(station, { fileName: 'CP001.log', content: Buffer.from('from the station') });
      const collected = await runCli(['station', 'logs', 'CP001', ...config]);
      expect(collected).toMatchObject({ code: 0, stderr: '' });
      const [, logId, where] = /^CP001: log (\w+) uploaded: (\S+) \(16 bytes\)$/m.exec(collected.stdout) ?? [];
      expect(where).toBe(path.join(api.temp.dataDir, 'logs', logId!, 'CP001.log'));
      expect(readFileSync(where!, 'utf8')).toBe('from the station');

      const out = path.join(tempDirForTest('cli-out'), 'copy.log');
      uploadsDiagnostics16(station, { fileName: 'CP001.log', content: Buffer.from('copied out') });
      const copied = await runCliJson<{ state: string; path: string }>([
        'station',
        'logs',
        'CP001',
        '--since',
        '2026-11-01T00:00:00Z',
        '--out',
        out,
        ...config,
      ]);
      expect(copied).toMatchObject({ code: 0, data: { state: 'uploaded', path: out } });
      expect(readFileSync(out, 'utf8')).toBe('copied out');

      uploadsDiagnostics16(station, {
        fileName: 'CP001.log',
        content: Buffer.from(''),
        skipUpload: true,
        finalStatus: 'UploadFailed',
      });
      const failed = await runCli(['station', 'logs', 'CP001', ...config]);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/^chargegate: CP001: log \w+ failed: the station said UploadFailed$/m);

      const noWait = await runCliJson<{ logId: string }>(['station', 'logs', 'CP001', '--no-wait', ...config]);
      expect(noWait).toMatchObject({ code: 0, data: { logId: expect.any(String) } });
      const usage = await runCli(['station', 'logs', 'CP001', '--via', 'smtp', ...config]);
      expect(usage.code).toBe(2);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
