import type { Scenario } from '../scenario.js';
import { localAuthorize } from './authorize.js';
import { backlogDrain } from './backlog-drain.js';
import { eventPipeline } from './event-pipeline.js';
import { footprint } from './footprint.js';
import { steadyLatency } from './latency.js';
import { modbusPolling } from './modbus-polling.js';
import { ocppCapacity } from './ocpp-capacity.js';

/** Issue 7's table, in its order. */
export const SCENARIOS: Scenario[] = [
  eventPipeline,
  steadyLatency,
  ocppCapacity,
  localAuthorize,
  backlogDrain,
  footprint,
  modbusPolling,
];
