/**
 * OCPP 1.6-J messages chargegate sends or answers, named after the OCPP 1.6 specification (section 6).
 * ocpp-rpc's strict mode validates them against the official JSON schemas on the wire; these types keep
 * our own code honest about the same shapes.
 */

export type IdTagStatus = 'Accepted' | 'Blocked' | 'Expired' | 'Invalid' | 'ConcurrentTx';

export interface IdTagInfo {
  status: IdTagStatus;
  expiryDate?: string;
  parentIdTag?: string;
}

export interface BootNotificationRequest {
  chargePointVendor: string;
  chargePointModel: string;
  chargePointSerialNumber?: string;
  chargeBoxSerialNumber?: string;
  firmwareVersion?: string;
  iccid?: string;
  imsi?: string;
  meterType?: string;
  meterSerialNumber?: string;
}

export interface BootNotificationResponse {
  status: 'Accepted' | 'Pending' | 'Rejected';
  currentTime: string;
  interval: number;
}

export interface HeartbeatResponse {
  currentTime: string;
}

export interface AuthorizeRequest {
  idTag: string;
}

export interface AuthorizeResponse {
  idTagInfo: IdTagInfo;
}

export interface StatusNotificationRequest {
  connectorId: number;
  errorCode: string;
  status: string;
  info?: string;
  timestamp?: string;
  vendorId?: string;
  vendorErrorCode?: string;
}

export interface StartTransactionRequest {
  connectorId: number;
  idTag: string;
  meterStart: number;
  timestamp: string;
  reservationId?: number;
}

export interface StartTransactionResponse {
  idTagInfo: IdTagInfo;
  transactionId: number;
}

export interface SampledValue {
  value: string;
  context?: string;
  format?: string;
  measurand?: string;
  phase?: string;
  location?: string;
  unit?: string;
}

export interface MeterValue {
  timestamp: string;
  sampledValue: SampledValue[];
}

export interface StopTransactionRequest {
  transactionId: number;
  meterStop: number;
  timestamp: string;
  idTag?: string;
  reason?: string;
  transactionData?: MeterValue[];
}

export interface StopTransactionResponse {
  idTagInfo?: IdTagInfo;
}

export interface MeterValuesRequest {
  connectorId: number;
  transactionId?: number;
  meterValue: MeterValue[];
}

export interface DataTransferRequest {
  vendorId: string;
  messageId?: string;
  data?: string;
}

export interface DataTransferResponse {
  status: 'Accepted' | 'Rejected' | 'UnknownMessageId' | 'UnknownVendorId';
  data?: string;
}

// ---- commands the central system sends ----------------------------------------------------------------

export interface RemoteStartTransactionRequest {
  connectorId?: number;
  idTag: string;
}

export interface RemoteStopTransactionRequest {
  transactionId: number;
}

export interface RemoteStartStopResponse {
  status: 'Accepted' | 'Rejected';
}

export interface ChangeConfigurationRequest {
  key: string;
  value: string;
}

export interface ChangeConfigurationResponse {
  status: 'Accepted' | 'Rejected' | 'RebootRequired' | 'NotSupported';
}

export interface GetConfigurationRequest {
  key?: string[];
}

export interface ConfigurationKey {
  key: string;
  readonly: boolean;
  value?: string;
}

export interface GetConfigurationResponse {
  configurationKey?: ConfigurationKey[];
  unknownKey?: string[];
}

export interface ResetRequest {
  type: 'Hard' | 'Soft';
}

export interface ResetResponse {
  status: 'Accepted' | 'Rejected';
}

export interface UnlockConnectorRequest {
  connectorId: number;
}

export interface UnlockConnectorResponse {
  status: 'Unlocked' | 'UnlockFailed' | 'NotSupported';
}

export type TriggerableMessage = 'BootNotification' | 'DiagnosticsStatusNotification' | 'FirmwareStatusNotification' | 'Heartbeat' | 'MeterValues' | 'StatusNotification';

export interface TriggerMessageRequest {
  requestedMessage: TriggerableMessage;
  connectorId?: number;
}

export interface TriggerMessageResponse {
  status: 'Accepted' | 'Rejected' | 'NotImplemented';
}

export interface ChangeAvailabilityRequest {
  connectorId: number;
  type: 'Inoperative' | 'Operative';
}

export interface ChangeAvailabilityResponse {
  status: 'Accepted' | 'Rejected' | 'Scheduled';
}
