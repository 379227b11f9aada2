import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { readConfiguredFile, type Config } from '../config/index.js';
import type { ServedCertificate } from '../health/index.js';
import type { ClientCertificate } from './station-access.js';

/** The gateway's station CA, which the listener trusts for client certificates (security profile 3). */
export interface StationCa {
  /**
   * Present once the CA exists: always under profile 3 (made at start), else after a first SignCertificate or `station
   * cert`.
   */
  certificate?: string;
  issue(csrPem: string, stationId: string): Promise<string>;
}

/**
 * Profiles 0 and 1 listen in plain HTTP; 2 and 3 in TLS 1.2+ with ocpp.tls. Profile 3 asks every station for a
 * client certificate of the station CA; an upgrade without a good one is refused with its reason, not at the
 * handshake, so the log says why.
 */
export function createListener(
  config: Config,
  stationCa: StationCa | undefined,
): { server: http.Server; certificate?: ServedCertificate } {
  const { securityProfile, tls } = config.ocpp;
  if (securityProfile < 2) return { server: http.createServer() };
  if (!tls) throw new Error(`ocpp.tls: required when securityProfile is ${securityProfile}`);
  const cert = readConfiguredFile(tls.cert, 'ocpp.tls.cert');
  const clientCertificates = securityProfile === 3 && {
    requestCert: true,
    rejectUnauthorized: false,
    ca: stationCa?.certificate ?? missingStationCa(),
  };
  const server = https.createServer({
    cert,
    key: readConfiguredFile(tls.key, 'ocpp.tls.key'),
    minVersion: 'TLSv1.2',
    ...clientCertificates,
  });
  return { server, certificate: { listener: 'ocpp', file: tls.cert, pem: cert } };
}

function missingStationCa(): never {
  throw new Error('security profile 3 needs the station CA');
}

export function clientCertificateOf(request: IncomingMessage): ClientCertificate {
  const socket = request.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function')
    return { authorized: false, commonName: undefined, error: 'not a TLS connection' };
  const subject = socket.getPeerCertificate().subject as Record<string, string | string[]> | undefined;
  const commonName = subject?.CN;
  return {
    authorized: socket.authorized,
    commonName: Array.isArray(commonName) ? commonName[0] : commonName,
    ...(!socket.authorized && { error: String(socket.authorizationError ?? 'no certificate') }),
  };
}
