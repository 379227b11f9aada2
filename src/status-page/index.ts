export { statusPageRoutes } from './routes.js';
export type { StatusSnapshot } from './status-snapshot.js';
