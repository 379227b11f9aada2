import { OCPP201 } from '../../ocpp/index.js';
import type { UplinkVersion } from '../version.js';
import { csmsCallHandler201 } from './csms-calls.js';
import { lastBootNotification, queuedV201, remoteStartOf, v201Dialect } from './dialect.js';
import { profileCalls201 } from './profile-calls.js';

/** OCPP 2.0.1: nothing to map; replayed events `offline`; the boot kept as the station sent it. */
export const v201: UplinkVersion = {
  protocol: OCPP201,
  dialect: v201Dialect,
  csmsCalls: csmsCallHandler201,
  profileCall: profileCalls201,
  bootInfo: (db, stationId, known) => lastBootNotification(db, stationId, known as Record<string, unknown> | undefined),
  queued: queuedV201,
  remoteStart: remoteStartOf,
};
