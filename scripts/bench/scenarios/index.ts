import type { Scenario } from '../scenario.js';
import { footprint } from './footprint.js';

/** Issue 7's table, in its order. */
export const SCENARIOS: Scenario[] = [footprint];
