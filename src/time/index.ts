export { formatZonedTimestamp } from './zoned-timestamp.js';
