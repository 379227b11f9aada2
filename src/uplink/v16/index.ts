import { OCPP16 } from '../../ocpp/index.js';
import type { UplinkVersion } from '../version.js';
import { csmsCallHandler16 } from './csms-calls.js';
import { v16Dialect } from './dialect.js';
import { profileCalls16 } from './profile-calls.js';

/** OCPP 1.6: the CSMS's transaction ids mapped, the station's messages and boot as it sent them. */
export const v16: UplinkVersion = {
  protocol: OCPP16,
  dialect: v16Dialect,
  csmsCalls: csmsCallHandler16,
  profileCall: profileCalls16,
  bootInfo: (_db, _stationId, known) => known,
  queued: (message) => message,
  // A 1.6 remote start is the domain's: its transaction is chargegate's from the start.
  remoteStart: () => undefined,
};
