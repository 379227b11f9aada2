/**
 * The OCPP identities chargegate admits: the last path segment of a station's URL and its basic-auth user. One
 * rule for the listener and for pairing, so a paired id is always one the listener can admit.
 */
const STATION_ID = /^[A-Za-z0-9._:-]{1,48}$/;

export const STATION_ID_RULE = '1-48 letters, digits or . _ : -';

export function isStationId(id: string): boolean {
  return STATION_ID.test(id);
}
