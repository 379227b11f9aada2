import { isLoopbackHost } from './hosts.js';
import type { Config } from './schema.js';

/**
 * Where stations reach the gateway's HTTP listener: the base of firmware downloads and HTTP log uploads
 * (contract 11.2, 11.3). firmware.baseUrl when set, else http.issuer (the gateway's name for its clients).
 */
export function stationFacingBaseUrl(config: Pick<Config, 'http' | 'firmware'>): string {
  return config.firmware.baseUrl ?? config.http.issuer;
}

/**
 * Why stations on the site LAN could not reach stationFacingBaseUrl, or null when they might. A wildcard issuer is
 * told by its own warning.
 */
export function stationFacingUrlProblem(config: Pick<Config, 'http' | 'firmware'>): string | null {
  const url = stationFacingBaseUrl(config);
  const host = new URL(url).hostname;
  if (!isLoopbackHost(host)) return null;
  const key = config.firmware.baseUrl === undefined ? 'http.issuer' : 'firmware.baseUrl';
  return `firmware.baseUrl: stations would fetch firmware and upload logs at ${url} (${key}), which no station can reach; set firmware.baseUrl to the address stations reach this gateway's HTTP listener under`;
}
