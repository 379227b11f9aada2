import type { Logger } from '../log/index.js';
import type { ForwardedMessage } from '../ocpp/index.js';
import type { Database } from '../store/index.js';
import type { CsmsCallContext, CsmsCallHandler } from './csms-calls.js';
import type { ProfileCallHandler } from './csms-profile-calls.js';
import type { LinkDialect } from './dialect.js';
import type { UplinkQueue } from './queue.js';

/** A remote start a station reported: the CSMS's profile calls apply to the transaction it began. */
export interface RemoteStart {
  stationTransactionId: string;
  remoteStartId: number;
  idToken?: string;
}

/**
 * Everything of the uplink that differs by OCPP version (docs/design/uplink.md#uplink-what-the-csms-sees), chosen once per station link:
 * v16/ and v201/. The rest of the uplink is the same for both.
 */
export interface UplinkVersion {
  readonly protocol: string;
  /** What the link says in this version. */
  dialect(stationId: string, queue: UplinkQueue, log: Logger): LinkDialect;
  /** What the CSMS's calls become (a remote start the domain's, the rest the station's). */
  csmsCalls(context: CsmsCallContext): CsmsCallHandler;
  /** A charging-profile call chargegate answers itself for a station on a circuit; undefined: relayed. */
  profileCall: ProfileCallHandler;
  /** The BootNotification that introduces the station to the CSMS (`known`: the one chargegate keeps, in 1.6 words). */
  bootInfo(db: Database, stationId: string, known: object | undefined): object | undefined;
  /** A message as the station's queue keeps it, queued while the link is `accepted` or not. */
  queued(message: ForwardedMessage, linkAccepted: boolean): ForwardedMessage;
  /** The remote start a message reports, if it does. */
  remoteStart(message: ForwardedMessage): RemoteStart | undefined;
}
