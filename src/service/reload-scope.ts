import { isDeepStrictEqual } from 'node:util';
import type { Config } from '../config/index.js';

type Section = 'http' | 'ocpp' | 'keystore';

/** Values bound at start (open listeners, the token issuer, the key passphrase): a reload cannot move them. */
const RESTART_ONLY: { [S in Section]: ReadonlyArray<keyof Config[S] & string> } = {
  http: ['host', 'port', 'issuer', 'tls'],
  ocpp: ['host', 'port', 'path', 'tls'],
  keystore: ['passphraseEnv'],
};

export interface ReloadPlan {
  /** The config the daemon runs with after the reload: the new file, with start-bound values kept as running. */
  config: Config;
  /** Key paths whose new value waits for a restart. */
  restartRequired: string[];
}

/**
 * Splits a reloaded config into what applies now and what needs a restart. Start-bound values stay as they run,
 * so every part keeps seeing one coherent config (an issuer that matches the port actually listened on).
 */
export function planReload(running: Config, next: Config): ReloadPlan {
  const restartRequired: string[] = running.dataDir === next.dataDir ? [] : ['dataDir'];
  const config: Config = { ...next, dataDir: running.dataDir };
  for (const section of Object.keys(RESTART_ONLY) as Section[]) {
    const kept: Record<string, unknown> = { ...next[section] };
    for (const key of RESTART_ONLY[section]) {
      const runningValue = (running[section] as Record<string, unknown>)[key];
      if (!isDeepStrictEqual(runningValue, (next[section] as Record<string, unknown>)[key]))
        restartRequired.push(`${section}.${key}`);
      kept[key] = runningValue;
    }
    Object.assign(config, { [section]: kept });
  }
  // The uplink is wired into the station handlers at start: a reload may move it (docs/design/uplink.md#uplink-what-the-csms-sees), not add
  // or remove it. upstream stays as it runs, since url and csms exclude each other.
  if (Boolean(running.upstream?.csms) !== Boolean(next.upstream?.csms)) {
    restartRequired.push('upstream.csms');
    config.upstream = running.upstream;
  }
  return { config, restartRequired };
}
