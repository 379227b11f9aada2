/** The webhook payloads, exactly as partners receive them (docs/partners/webhooks.md#receiving-webhooks-partners). */

export const AUTHORIZATION_STATUSES = ['Accepted', 'Blocked', 'Expired', 'Invalid', 'ConcurrentTx'] as const;
export type AuthorizationStatus = (typeof AUTHORIZATION_STATUSES)[number];

export const STOP_REASONS = [
  'Local',
  'EVDisconnected',
  'EmergencyStop',
  'Remote',
  'HardReset',
  'SoftReset',
  'Reboot',
  'PowerLoss',
  'UnlockCommand',
  'DeAuthorized',
  'Other',
] as const;
export type StopReason = (typeof STOP_REASONS)[number];

export interface AuthorizePayload {
  stationId: string;
  idTag: string;
  status: AuthorizationStatus;
  chargePointId?: string;
  connectorId?: number;
}

export interface StartTransactionPayload {
  stationId: string;
  chargePointId: string;
  connectorId: number;
  idTag: string;
  meterStart: number;
  transactionId: number;
  reservationId?: string;
  /** docs/partners/webhooks.md#receiving-webhooks-partners: the station's own time, in the configured zone. */
  startedAt: string;
}

export interface StopTransactionPayload {
  stationId: string;
  chargePointId: string;
  connectorId: number;
  idTag: string;
  meterStart: number;
  meterStop: number;
  transactionId: number;
  reason?: Exclude<StopReason, 'Local'>;
  startedAt: string;
  stoppedAt: string;
  /** docs/partners/signed-meter-values.md#signed-meter-values: absent when the station signed nothing (or webhookDelivery.signedMeterValues). */
  signedMeterValues?: SignedMeterValuePayload[];
}

/** A signed reading as partners receive it, its four OCPP fields exactly as the station sent them. */
export interface SignedMeterValuePayload {
  context: string;
  timestamp: string;
  encodingMethod: string | null;
  signingMethod: string | null;
  signedMeterData: string;
  publicKey: string | null;
  verified: boolean | null;
  /** Whether a signed Begin or End value agrees with meterStart or meterStop; absent where the record states none. */
  consistent?: boolean;
}

export interface ChargePointStatusPayload {
  stationId: string;
  chargePointId: string;
  connectorId: number;
  status: string;
  errorCode: string;
}

/** docs/partners/webhooks.md#receiving-webhooks-partners: energies travel in kWh; the domain keeps Wh as stations report them. */
export function whToKWh(wh: number): number {
  return wh / 1000;
}
