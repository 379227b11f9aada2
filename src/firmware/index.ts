export { FirmwareError } from './errors.js';
export {
  addImage,
  FIRMWARE_DIR,
  findImage,
  firmwareDir,
  listImages,
  MAX_SIGNATURE_CHARS,
  MAX_SIGNING_CERTIFICATE_CHARS,
  openImage,
  removeImage,
  type AddImageInput,
  type FirmwareImage,
  type ImageBounds,
} from './images.js';
export { FirmwareRollouts, TOKEN_GRACE_MS, type FirmwareRolloutsOptions, type RolloutRequest } from './rollouts.js';
export type { RolloutState, StationUpdateState } from './rollout-store.js';
export type { RolloutView, StationUpdateView } from './views.js';
