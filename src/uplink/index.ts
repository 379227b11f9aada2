export { Uplink, type UplinkOptions, type UplinkStationStatus } from './uplink.js';
export type { LinkState } from './station-link.js';
export { droppedCounts, queueStats, type QueueStats } from './queue.js';
