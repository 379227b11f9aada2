import type { Scenario } from '../scenario.js';
import { localAuthorize } from './authorize.js';
import { backlogDrain } from './backlog-drain.js';
import { eventPipeline } from './event-pipeline.js';
import { footprint } from './footprint.js';
import { steadyLatency } from './latency.js';
import { loadControl } from './load-control.js';
import { modbusPolling } from './modbus-polling.js';
import { ocppCapacity } from './ocpp-capacity.js';
import { sitePace } from './site-pace.js';

/** Issue 7's table, in its order, then issue 29's load control and issue 32's writes at a site's pace. */
export const SCENARIOS: Scenario[] = [
  eventPipeline,
  steadyLatency,
  ocppCapacity,
  localAuthorize,
  backlogDrain,
  footprint,
  modbusPolling,
  loadControl,
  sitePace,
];
