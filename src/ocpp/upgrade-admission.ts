import type { Config } from '../config/index.js';
import { FailureLimiter } from '../credentials/index.js';
import type { Logger } from '../log/index.js';
import type { Site } from '../site/index.js';
import type { StationSession } from './connections.js';
import { CENTRAL_SYSTEM_PROTOCOLS, type RpcServer } from './rpc.js';
import { decideAccess } from './station-access.js';
import { clientCertificateOf } from './station-listener.js';

/**
 * Decides every WebSocket upgrade before a connection exists (docs/operating/security.md#security): a subprotocol we speak, then the
 * address's failure budget (refused at once, unhashed, once spent), then the station's access under the current
 * security profile. Each refusal is logged with its reason.
 */
export function admitStationUpgrades(
  rpc: RpcServer<StationSession>,
  options: { config: () => Config; site: Site; log: Logger },
): void {
  const { config, site, log } = options;
  const failedUpgrades = new FailureLimiter();
  rpc.auth(async (accept, reject, handshake) => {
    const { ocpp: current } = config();
    const fields = { stationId: handshake.identity, remoteAddress: handshake.remoteAddress };
    if (!CENTRAL_SYSTEM_PROTOCOLS.some((p) => handshake.protocols.has(p))) {
      log.warn(
        { ...fields, offered: [...handshake.protocols] },
        'station connection refused: it offers neither the ocpp2.0.1 nor the ocpp1.6 subprotocol',
      );
      reject(400, 'WebSocket subprotocol ocpp2.0.1 or ocpp1.6 required');
      return;
    }
    const limit = failedUpgrades.check(handshake.remoteAddress ?? 'unknown');
    if (!limit.allowed) {
      log.debug(
        { ...fields, retryAfterS: limit.retryAfterS },
        'station connection refused: too many failed attempts from this address',
      );
      reject(429, `too many failed attempts from this address; retry in ${limit.retryAfterS} s`);
      return;
    }
    const decision = await decideAccess({
      identity: handshake.identity,
      endpoint: handshake.endpoint,
      path: current.path,
      profile: current.securityProfile,
      password: handshake.password,
      admission: site.stations.admission(handshake.identity),
      ...(current.securityProfile === 3 && { clientCertificate: clientCertificateOf(handshake.request) }),
    });
    if (limit.ticket.done(decision.accepted))
      log.warn(
        fields,
        'station connection refused: too many failed attempts from this address; refusing it for a minute without checking',
      );
    if (!decision.accepted) {
      log.warn({ ...fields, status: decision.status, reason: decision.reason }, 'station connection refused');
      reject(decision.status, decision.reason);
      return;
    }
    accept(decision.session);
  });
}
