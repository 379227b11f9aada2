/** Why a delivery is on the dead-letter list (deliveries.dead_reason). */
export const QUEUE_FULL = 'queue_full';
export const RETRIES_EXHAUSTED = 'retries_exhausted';
export type DeadReason = typeof QUEUE_FULL | typeof RETRIES_EXHAUSTED;
