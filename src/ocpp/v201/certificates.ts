import { errorCodeOf } from '../../errors/index.js';
import type { CallHandler, StationHandlerDeps } from '../call-handling.js';
import type { StationClient } from '../connections.js';
import { typedCall } from '../rpc.js';
import { SIGN_CERTIFICATE_PER_STATION_PER_MINUTE } from '../sign-certificate-throttle.js';
import type { Ocpp201Actions } from './messages.js';

/**
 * SignCertificate (security profile 3, docs/install/connecting-stations.md#connecting-a-station, profile 3 certificates): the station CA signs the station's CSR and
 * the certificate goes to the station in its own CertificateSigned call. Throttled per station; a CSR the CA
 * refuses is answered Rejected with a warning.
 */
export function signCertificateHandler(
  client: StationClient,
  deps: Pick<StationHandlerDeps, 'logger' | 'issueStationCertificate' | 'signCertificateThrottle' | 'lanes'>,
): CallHandler<Ocpp201Actions, 'SignCertificate'> {
  const { logger: log } = deps;
  const stationId = client.session.stationId;
  // An operation on the station's lane: a station that holds its answer cannot hold a lowered limit back.
  const lane = deps.lanes.of(client);
  const call = typedCall<Ocpp201Actions>({ call: (action, params) => lane.call('operation', action, params) });
  return async (params) => {
    const turn = deps.signCertificateThrottle.take(stationId);
    if (turn !== 'allowed') {
      if (turn === 'first refused')
        log.warn(
          { limit: SIGN_CERTIFICATE_PER_STATION_PER_MINUTE },
          'SignCertificate refused: too many from this station in a minute; more this minute are refused unlogged',
        );
      return { status: 'Rejected' };
    }
    const issue = deps.issueStationCertificate;
    if (!issue || (params.certificateType ?? 'ChargingStationCertificate') !== 'ChargingStationCertificate') {
      log.warn(
        { certificateType: params.certificateType },
        'SignCertificate refused: only a ChargingStationCertificate, and only with a station CA',
      );
      return { status: 'Rejected' };
    }
    let certificateChain: string;
    try {
      certificateChain = await issue(params.csr, stationId);
    } catch (err) {
      if (errorCodeOf(err) !== 'CHARGEGATE_STATION_CSR') throw err;
      log.warn({ reason: (err as Error).message }, 'SignCertificate refused');
      return { status: 'Rejected' };
    }
    // The certificate goes in its own call once the station has our answer (2.0.1 A02).
    setImmediate(() => {
      call('CertificateSigned', { certificateChain, certificateType: 'ChargingStationCertificate' }).then(
        (answer) =>
          answer.status === 'Accepted'
            ? log.info('station certificate sent')
            : log.warn(
                'the station refused the certificate it asked for (CertificateSigned: Rejected); it keeps its current one',
              ),
        (err: unknown) => log.warn({ err }, 'CertificateSigned not taken by the station'),
      );
    });
    return { status: 'Accepted' };
  };
}
