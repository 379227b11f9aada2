export { isOcmfText, OcmfFormatError, parseOcmf, type OcmfReading, type OcmfRecord } from './ocmf.js';
export { meterKeyHex, MeterKeyError, parseMeterPublicKey } from './public-key.js';
export { CHECKABLE_ALGORITHMS, verifyOcmfRecord } from './verify.js';
export {
  ocmfTextOf,
  signedEnergyWh,
  signedValueFromV16,
  verifySignedValue,
  type SignedMeterValue,
  type SignedValueVerdict,
} from './signed-value.js';
