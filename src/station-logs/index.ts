export { LogFiles, LOGS_DIR, randomLogId, safeName, UploadTooLargeError, type StoredLog } from './log-files.js';
export { UploadCutError, UploadReception, type UploadClaim, type UploadEvents } from './reception.js';
export { UploadGrants, type UploadGrant } from './upload-grants.js';
export type { FtpUploads, FtpUploadsOptions } from './ftp-uploads.js';

/**
 * The FTP upload locations' code, loaded only where logs.ftp is configured: ftp-srv and its dependencies (bunyan,
 * moment, lodash, yargs) cost ~0.2 s of CPU and a few MB at every start otherwise.
 */
export const loadFtpUploads = () => import('./ftp-uploads.js');
export {
  LogCollections,
  LogsInProgressError,
  SYSTEM_LOGS_CLOCK,
  type LogCollectionsOptions,
  type LogRequestOutcome,
  type LogsClock,
  type UploadLocations,
} from './collections.js';
export { LogRecords, type LogRecord, type LogState } from './records.js';
