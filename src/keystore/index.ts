export {
  Keystore,
  listKeys,
  ACCESS_TOKEN_LIFETIME_S,
  type KeyInfo,
  type KeyState,
  type KeystoreOptions,
  type RotationResult,
  type SigningKey,
  type WebhookSigningKeys,
} from './keystore.js';
export { KeystoreError, KEYSTORE_FILE, type KeyPurpose } from './keystore-file.js';
export { keystorePassphrase, type PassphraseSource } from './passphrase.js';
export type { PublicJwk } from './signing-keys.js';
export { keystoreEncrypted, openKeystore } from './open-from-config.js';
export { createGatewayCertificate, saveGatewayCertificate, type GatewayCertificate } from './gateway-certificate.js';
export { STATION_CA_DAYS, STATION_CERTIFICATE_DAYS, StationCsrError } from './station-ca.js';
