import { verifySecret } from '../credentials/index.js';
import { isStationId, STATION_ID_RULE, type StationAdmission } from '../site/index.js';
import type { StationSession } from './connections.js';

export type SecurityProfile = 0 | 1 | 2 | 3;

/** OCPP 1.6 section 4.2: a station may send more than BootNotification once it is known, or let in as unknown. */
export function isAdmitted(verdict: StationAdmission['verdict'], acceptUnknownStations: boolean): boolean {
  return verdict === 'known' || (verdict === 'unknown' && acceptUnknownStations);
}

export type AccessDecision =
  { accepted: true; session: StationSession } | { accepted: false; status: 400 | 401 | 404; reason: string };

/** OCPP identities end up in URLs, logs and the database: keep them to what a config id may hold. */

/**
 * docs/install/connecting-stations.md#connecting-a-station at the WebSocket upgrade. Known stations must prove their `station pair` password under
 * profiles 1 and 2. Unknown stations are let in so their BootNotification can be answered Pending and recorded;
 * blocked or removed ones so it can be answered Rejected. Neither may do anything else (see station-handlers).
 */
export async function decideAccess(input: {
  identity: string;
  endpoint: string;
  path: string;
  profile: SecurityProfile;
  password: Buffer | undefined;
  admission: StationAdmission;
  /** Under profile 3: the certificate the station presented in the TLS handshake. */
  clientCertificate?: ClientCertificate;
}): Promise<AccessDecision> {
  if (trimSlash(input.endpoint) !== trimSlash(input.path))
    return { accepted: false, status: 404, reason: `no OCPP endpoint at ${input.endpoint}` };
  if (!isStationId(input.identity))
    return { accepted: false, status: 400, reason: `station identity must be ${STATION_ID_RULE}` };
  const { admission } = input;
  const session = (passwordHash: string | null): AccessDecision => ({
    accepted: true,
    session: { stationId: input.identity, admission: admission.verdict, passwordHash },
  });
  if (input.profile === 3) return certificateAccess(input.identity, admission, input.clientCertificate, session);
  if (admission.verdict !== 'known' || input.profile === 0) return session(null);
  if (!admission.passwordHash)
    return { accepted: false, status: 401, reason: 'station has no password yet: run `chargegate station pair`' };
  if (!input.password) return { accepted: false, status: 401, reason: 'no HTTP Basic password' };
  if (!(await verifySecret(input.password.toString('utf8'), admission.passwordHash)))
    return { accepted: false, status: 401, reason: 'wrong password' };
  return session(admission.passwordHash);
}

/** What the TLS handshake established about the station's client certificate. */
export interface ClientCertificate {
  /** Issued by the gateway's station CA and valid now. */
  authorized: boolean;
  commonName: string | undefined;
  /** Why it is not authorized (no certificate, another CA, expired). */
  error?: string;
}

/**
 * Security profile 3: the certificate is the credential. Only one the gateway's station CA issued for exactly
 * this station id admits it, and blocking or removing the station revokes it.
 */
function certificateAccess(
  identity: string,
  admission: StationAdmission,
  certificate: ClientCertificate | undefined,
  session: (passwordHash: string | null) => AccessDecision,
): AccessDecision {
  if (!certificate?.authorized) {
    return {
      accepted: false,
      status: 401,
      reason: `no client certificate from this gateway's station CA${certificate?.error ? ` (${certificate.error})` : ''}: run \`chargegate station cert\``,
    };
  }
  if (certificate.commonName !== identity)
    return {
      accepted: false,
      status: 401,
      reason: `the client certificate is for "${certificate.commonName ?? ''}", not "${identity}"`,
    };
  if (admission.verdict === 'rejected')
    return { accepted: false, status: 401, reason: `station ${admission.state}: its certificate no longer admits it` };
  return session(admission.verdict === 'known' ? admission.passwordHash : null);
}

/** Whether a connected station's admission moved since it connected, so its socket must go. */
export function accessChanged(session: StationSession, admission: StationAdmission, profile: SecurityProfile): boolean {
  if (admission.verdict !== session.admission) return true;
  return admission.verdict === 'known' && profile !== 0 && admission.passwordHash !== session.passwordHash;
}

function trimSlash(path: string): string {
  return path.replace(/\/+$/, '') || '/';
}
