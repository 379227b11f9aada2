import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';

/**
 * A temporary data dir and config file for one test. `config` is merged over a loopback config with
 * ports 0 (the OS picks free ones), one site `s1` with station `CP001`.
 */
export interface TempSite {
  dir: string;
  dataDir: string;
  configPath: string;
  write(config: Record<string, unknown>): void;
  cleanup(): void;
}

export function baseConfig(dataDir: string): Record<string, unknown> {
  return {
    dataDir,
    timezone: 'Europe/Brussels',
    log: { level: 'warn' },
    http: { host: '127.0.0.1', port: 0 },
    ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0 },
    company: { id: 'acme' },
    sites: [
      {
        id: 's1',
        stations: [{ id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1, 2] }] }],
        meters: [],
        webhooks: [],
      },
    ],
    groups: [],
  };
}

export function tempSite(overrides: Record<string, unknown> = {}): TempSite {
  const dir = mkdtempSync(path.join(tmpdir(), 'chargegate-'));
  const dataDir = path.join(dir, 'var');
  const configPath = path.join(dir, 'chargegate.yaml');
  const site: TempSite = {
    dir,
    dataDir,
    configPath,
    write(config) {
      writeFileSync(configPath, stringify({ ...baseConfig(dataDir), ...config }));
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
  site.write(overrides);
  return site;
}
