import { z } from 'zod';
import { apiSchemas } from './api-schemas.js';

/** The firmware rollouts API's bodies (contract 11.2): validated by the routes, published by GET /openapi.json. */

/** More stations at once than this is not a rollout an installer watches; the site's own bound is its station count. */
export const MAX_PARALLEL = 100;

export const rolloutParamsSchema = z.strictObject({ id: z.string().min(1).max(64) });

export const rolloutRequestSchema = z
  .strictObject({
    imageId: z.string().min(1).max(64).describe('An image `chargegate firmware add` stored (firmware list)'),
    stationIds: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(1000)
      .optional()
      .describe('The stations, sent in this order among those free to go; or siteId'),
    siteId: z.string().min(1).max(64).optional().describe('Every station of the site; or stationIds'),
    parallel: z
      .number()
      .int()
      .min(1)
      .max(MAX_PARALLEL)
      .default(1)
      .describe('At most this many stations updating at once'),
    force: z
      .boolean()
      .default(false)
      .describe('Send stations with a running transaction too (the car stops charging when the station restarts)'),
    continueOnFailure: z
      .boolean()
      .default(false)
      .describe("A station's failure does not stop the rollout (by default no further station is sent)"),
  })
  .refine((r) => (r.stationIds === undefined) !== (r.siteId === undefined), {
    message: 'give exactly one of stationIds and siteId',
  })
  .register(apiSchemas, { id: 'FirmwareRolloutRequest' });

const stationUpdateSchema = z.strictObject({
  stationId: z.string(),
  state: z
    .enum(['waiting', 'sent', 'downloading', 'downloaded', 'installing', 'installed', 'failed', 'cancelled'])
    .describe('cancelled: never sent (the rollout was cancelled, or stopped by a failure)'),
  reason: z
    .string()
    .nullable()
    .describe('Why it failed or was cancelled; waiting: why it is not sent yet (not connected, charging)'),
  oldFirmwareVersion: z.string().nullable().describe('The firmwareVersion it booted with before it was sent'),
  sentAt: z.string().nullable().describe('RFC 3339: when UpdateFirmware was sent'),
  progressAt: z.string().nullable().describe('RFC 3339: its last step (firmware.stationTimeoutS counts from it)'),
  endedAt: z.string().nullable(),
});

export const rolloutSchema = z
  .strictObject({
    rolloutId: z.string(),
    imageId: z.string(),
    state: z
      .enum(['running', 'stopped', 'cancelled', 'done'])
      .describe('stopped: a station failed and no other is sent since; done: every station ended'),
    parallel: z.number().int(),
    force: z.boolean(),
    continueOnFailure: z.boolean(),
    who: z.string().describe('cli, or the API client id'),
    createdAt: z.string(),
    endedAt: z.string().nullable().describe('When its last station ended; null while it goes on'),
    stations: z.array(stationUpdateSchema),
  })
  .register(apiSchemas, { id: 'FirmwareRollout' });
