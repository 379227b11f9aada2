export { statusPageRoutes } from './routes.js';
export { STATUS_PAGE_REFRESH_MS } from './page-assets.js';
export { statusSnapshot, type MeterLive, type MeterStatus, type OpenTransactionStatus, type StationStatus, type StatusSnapshot, type StatusSnapshotSources } from './status-snapshot.js';
export { packageVersion } from './package-version.js';
