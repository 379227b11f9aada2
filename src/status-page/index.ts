export { statusPageRoutes } from './routes.js';
export type { StatusSnapshot } from './status-snapshot.js';
export { packageVersion } from './package-version.js';
