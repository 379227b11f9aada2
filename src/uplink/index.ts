export { Uplink, type UplinkOptions, type UplinkStationStatus } from './uplink.js';
export type { LinkStateName } from './link-state.js';
export type { LinkClock } from './station-link.js';
export { droppedCounts, queueStats, type QueueStats } from './queue.js';
