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
