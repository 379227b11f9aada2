import type { Scenario } from '../scenario.js';
import { localAuthorize } from './authorize.js';
import { footprint } from './footprint.js';
import { ocppCapacity } from './ocpp-capacity.js';

/** Issue 7's table, in its order. */
export const SCENARIOS: Scenario[] = [ocppCapacity, localAuthorize, footprint];
