import { statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { AUTHORIZATION_STATUSES, type AuthorizationStatus } from '../site/index.js';
import { messageOf } from '../log/index.js';
import { ChargegateError } from '../errors/index.js';

/** What the plugin's `authorize` receives (docs/install/connecting-stations.md#connecting-a-station, who may charge). */
export interface PluginRequest {
  idTag: string;
  stationId: string;
  connectorId: number | undefined;
  siteId: string;
}

export type PluginOutcome =
  { kind: 'answered'; status: AuthorizationStatus } | { kind: 'passed' } | { kind: 'failed'; reason: string };

export interface AuthorizationPlugin {
  readonly path: string;
  decide(request: PluginRequest): Promise<PluginOutcome>;
}

/** Raised at start or reload when the configured plugin cannot be used; names the config key. */
export class PluginLoadError extends ChargegateError {
  override name = 'PluginLoadError';
  readonly code = 'CHARGEGATE_PLUGIN_LOAD';
}

/** Changes when the plugin file is edited: a reload with a new version imports the file again. */
export function pluginVersion(path: string): string {
  try {
    return `${path}@${statSync(path).mtimeMs}`;
  } catch {
    return `${path}@missing`;
  }
}

/**
 * Imports the installer's module. The version goes into the import URL so a reload after editing the plugin
 * gets the new code rather than Node's cached module.
 */
export async function loadPlugin(path: string, timeoutMs: number): Promise<AuthorizationPlugin> {
  let authorize: (request: PluginRequest) => unknown;
  try {
    const url = `${pathToFileURL(path).href}?v=${encodeURIComponent(pluginVersion(path))}`;
    const module = (await import(url)) as { authorize?: unknown; default?: { authorize?: unknown } };
    const fn = module.authorize ?? module.default?.authorize;
    if (typeof fn !== 'function') throw new Error('it exports no authorize function');
    authorize = fn as typeof authorize;
  } catch (err) {
    // The cause keeps the installer's stack: the line of their plugin that threw.
    throw new PluginLoadError(`authorization.plugin: cannot load ${path}: ${messageOf(err)}`, { cause: err });
  }
  return {
    path,
    async decide(request) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<PluginOutcome>((resolve) => {
        timer = setTimeout(() => resolve({ kind: 'failed', reason: `no answer within ${timeoutMs} ms` }), timeoutMs);
      });
      const answer = (async (): Promise<PluginOutcome> => {
        try {
          const status = await authorize({ ...request });
          if (status === undefined || status === null) return { kind: 'passed' };
          if (typeof status === 'string' && (AUTHORIZATION_STATUSES as readonly string[]).includes(status))
            return { kind: 'answered', status: status as AuthorizationStatus };
          return {
            kind: 'failed',
            reason: `returned ${JSON.stringify(status)}, not one of ${AUTHORIZATION_STATUSES.join(', ')} or undefined`,
          };
        } catch (err) {
          return { kind: 'failed', reason: `threw: ${messageOf(err)}` };
        }
      })();
      try {
        return await Promise.race([answer, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
