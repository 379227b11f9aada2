export { LogFiles, LOGS_DIR, randomLogId, safeName, UploadTooLargeError, type StoredLog } from './log-files.js';
export { UploadCutError, UploadReception, type UploadEvents } from './reception.js';
export { UploadGrants, type UploadGrant } from './upload-grants.js';
export { uploadRoutes } from './http-uploads.js';
export { startFtpUploads, type FtpUploads, type FtpUploadsOptions } from './ftp-uploads.js';
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
export { logRoutes, type LogRoutesDeps } from './logs-api.js';
