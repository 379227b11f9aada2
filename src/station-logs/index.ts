export { LogFiles, LOGS_DIR, randomLogId, safeName, UploadTooLargeError, type StoredLog } from './log-files.js';
export { UploadCutError, UploadReception, type UploadEvents } from './reception.js';
export { UploadGrants, type UploadGrant } from './upload-grants.js';
export { uploadRoutes } from './http-uploads.js';
export { startFtpUploads, type FtpUploads, type FtpUploadsOptions } from './ftp-uploads.js';
