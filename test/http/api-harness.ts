import { onTestFinished } from 'vitest';
import { Applications } from '../../src/applications/index.js';
import { loadConfig } from '../../src/config/index.js';
import {
  CP001_TWO_CHARGE_POINTS,
  startTestDaemon,
  type TestDaemon,
  type TestDaemonOptions,
} from '../support/daemon.js';
import { freePort } from '../support/free-port.js';

/** Two sites and a group per scope level, so reach and inheritance can be seen from the API. */
export const API_SITES = [
  {
    id: 's1',
    stations: [CP001_TWO_CHARGE_POINTS],
    meters: [],
    webhooks: [],
  },
  {
    id: 's2',
    stations: [{ id: 'CP002', chargePoints: [{ id: 'CP002-A', connectors: [1] }] }],
    meters: [],
    webhooks: [],
  },
];

export const API_GROUPS = [
  { id: 'ops', scope: 'company:acme', permissions: ['charge-points:read', 'charge-points:control'] },
  { id: 'viewer-s1', scope: 'site:s1', permissions: ['charge-points:read'] },
  { id: 'station-cp002', scope: 'station:CP002', permissions: ['charge-points:read', 'charge-points:control'] },
  { id: 'only-cp001-b', scope: 'chargePoint:CP001-B', permissions: ['charge-points:read', 'charge-points:control'] },
];

export interface ApiDaemon extends TestDaemon {
  /** http.issuer = the base URL of the API, token endpoint and JWKS. */
  baseUrl: string;
  jwksUrl: string;
  createApp(...groupIds: string[]): { clientId: string; clientSecret: string };
  /** A token from POST /oauth2/token with form-body credentials. */
  token(app: { clientId: string; clientSecret: string }): Promise<string>;
  /** A JSON API call with an optional bearer token. */
  call(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: Record<string, unknown> & unknown[] }>;
}

/** startApiDaemon for the running test: stopped when the test finishes, passed or failed. */
export async function apiDaemonForTest(
  config: Record<string, unknown> = {},
  options: TestDaemonOptions = {},
): Promise<ApiDaemon> {
  const api = await startApiDaemon(config, options);
  onTestFinished(() => api.stop());
  return api;
}

export async function startApiDaemon(
  config: Record<string, unknown> = {},
  options: TestDaemonOptions = {},
): Promise<ApiDaemon> {
  // The issuer must name the real port, which port 0 cannot give before the daemon listens.
  const port = await freePort();
  const test = await startTestDaemon(
    {
      http: { host: '127.0.0.1', port },
      sites: API_SITES,
      groups: API_GROUPS,
      ...config,
    },
    options,
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  const applications = new Applications({ db: test.db });
  const call: ApiDaemon['call'] = async (method, path, options = {}) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(options.token && { authorization: `Bearer ${options.token}` }),
        ...(options.body !== undefined && { 'content-type': 'application/json' }),
        ...options.headers,
      },
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
    });
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as Record<string, unknown> & unknown[],
    };
  };
  return {
    ...test,
    baseUrl,
    jwksUrl: `${baseUrl}/.well-known/jwks.json`,
    createApp: (...groupIds) =>
      applications.create(loadConfig(test.temp.configPath), { name: `test ${groupIds.join('+')}`, groupIds }),
    async token(app) {
      const response = await fetch(`${baseUrl}/oauth2/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: app.clientId,
          client_secret: app.clientSecret,
        }),
      });
      const body = (await response.json()) as { access_token?: string };
      if (response.status !== 200 || !body.access_token)
        throw new Error(`token request answered ${response.status}: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    call,
  };
}
