import { z } from 'zod';

/* The values the config's parts are made of: ids, ports, durations. */

export const id = z
  .string()
  .min(1)
  .regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only');
export const port = z.number().int().min(0).max(65535);
/** The longest delay a Node.js timer holds (2^31-1 ms); a longer one fires at once, in a loop. */
export const MAX_TIMER_MS = 2_147_483_647;
export const millis = z
  .number()
  .int()
  .positive()
  .max(MAX_TIMER_MS, { error: `at most ${MAX_TIMER_MS} (about 24 days)` });
export const seconds = z
  .number()
  .positive()
  .max(MAX_TIMER_MS / 1000, { error: `at most ${Math.floor(MAX_TIMER_MS / 1000)} (about 24 days)` });
export const atMost = (max: number) => ({ error: `at most ${max}` });
