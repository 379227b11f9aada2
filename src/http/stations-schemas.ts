import { z } from 'zod';
import { apiSchemas } from './api-schemas.js';

/** The stations API's bodies (contract 11.1): validated by the routes, published by GET /openapi.json. */

const connectorId = z.number().int().min(1).max(1_000_000);

export const stationParamsSchema = z.strictObject({ id: z.string().min(1).max(64) });

export const resetRequestSchema = z
  .strictObject({
    type: z
      .enum(['soft', 'hard'])
      .default('soft')
      .describe('soft: 1.6 Soft, 2.0.1 OnIdle (waits for charging to end); hard: 1.6 Hard, 2.0.1 Immediate'),
  })
  .register(apiSchemas, { id: 'StationResetRequest' });

export const unlockRequestSchema = z
  .strictObject({ connectorId: connectorId.describe('The connector to unlock (on 2.0.1: its EVSE)') })
  .register(apiSchemas, { id: 'StationUnlockRequest' });

export const availabilityRequestSchema = z
  .strictObject({
    connectorId: connectorId.optional().describe('Omitted: the whole station'),
    operative: z.boolean().describe('true: Operative; false: Inoperative (out of service)'),
  })
  .register(apiSchemas, { id: 'StationAvailabilityRequest' });

export const triggerRequestSchema = z
  .strictObject({
    message: z
      .string()
      .min(1)
      .max(64)
      .describe('The message to send now: BootNotification, Heartbeat, StatusNotification, MeterValues, ...'),
    connectorId: connectorId.optional().describe('For a connector (on 2.0.1: its EVSE); omitted: the station'),
  })
  .register(apiSchemas, { id: 'StationTriggerRequest' });

const configurationKey = z
  .string()
  .min(1)
  .max(200)
  .describe('1.6: the key (HeartbeatInterval); 2.0.1: Component.Variable or Component[evse].Variable');

export const configurationQuerySchema = z.strictObject({
  key: z
    .union([configurationKey, z.array(configurationKey).max(100)])
    .optional()
    .transform((k) => (k === undefined ? [] : typeof k === 'string' ? [k] : k)),
});

export const configurationSetRequestSchema = z
  .strictObject({ key: configurationKey, value: z.string().max(1000) })
  .register(apiSchemas, { id: 'StationConfigurationSetRequest' });

const statusInfo = z.strictObject({ reasonCode: z.string(), additionalInfo: z.string().optional() });

export const operationAnswerSchema = z
  .strictObject({
    stationId: z.string(),
    action: z.string().describe('The OCPP action sent (Reset, UnlockConnector, GetVariables, ...)'),
    status: z
      .string()
      .describe(
        "The station's answer: Accepted, Unlocked, Scheduled, RebootRequired (success); Rejected, UnlockFailed, NotSupported, a CALLERROR code, ... (refused)",
      ),
    statusInfo: statusInfo.optional().describe('2.0.1: why, as the station said (a CALLERROR: its code and text)'),
    result: z
      .unknown()
      .optional()
      .describe('A read: {configurationKey: [{key, value?, readonly?}], unknownKey?}; a 2.0.1 report: {requestId}'),
  })
  .register(apiSchemas, { id: 'StationOperationAnswer' });

export const stationSchema = z
  .strictObject({
    id: z.string(),
    site: z.string().nullable().describe('Null for an unknown station not yet paired'),
    protocol: z.string().nullable().describe('ocpp1.6 or ocpp2.0.1 while connected; null otherwise'),
    connected: z.boolean(),
    lastSeen: z.string().nullable().describe('RFC 3339'),
    vendor: z.string().nullable().describe('From its last BootNotification'),
    model: z.string().nullable(),
    serialNumber: z.string().nullable(),
    firmwareVersion: z.string().nullable(),
    connectors: z.array(
      z.strictObject({
        connectorId: z.number().int(),
        chargePointId: z.string(),
        status: z.string(),
        errorCode: z.string(),
      }),
    ),
    operation: z
      .strictObject({ kind: z.string(), id: z.string(), state: z.string() })
      .nullable()
      .describe('The firmware or log operation in progress; null when none is'),
  })
  .register(apiSchemas, { id: 'Station' });

export const stationListSchema = z.array(stationSchema).register(apiSchemas, { id: 'StationList' });

export const stationDetailSchema = stationSchema
  .extend({
    operations: z
      .array(
        z.strictObject({
          at: z.string().describe('RFC 3339: when it was asked'),
          who: z.string().describe('cli, or the API client id'),
          action: z.string(),
          request: z.record(z.string(), z.unknown()),
          answer: z
            .strictObject({ status: z.string(), statusInfo: statusInfo.optional() })
            .nullable()
            .describe("The station's answer (a read's result is not kept)"),
          error: z
            .strictObject({ kind: z.enum(['offline', 'timeout', 'error']), message: z.string() })
            .nullable()
            .describe('Why the station gave no answer'),
        }),
      )
      .describe('The last 50 operations, newest first'),
    baseReport: z
      .strictObject({
        requestId: z.number().int(),
        requestedAt: z.string(),
        generatedAt: z.string().nullable(),
        parts: z.number().int(),
        complete: z.boolean(),
        truncated: z.boolean(),
        variables: z.array(z.strictObject({ key: z.string(), value: z.string().optional(), readonly: z.boolean() })),
      })
      .nullable()
      .describe('2.0.1: the last base report asked for (POST /stations/{id}/report), as far as it came'),
  })
  .register(apiSchemas, { id: 'StationDetail' });

/** Contract 11.3: a station's diagnostics log collected by the gateway. */
export const logRequestSchema = z
  .strictObject({
    since: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('RFC 3339: the oldest entries wanted (1.6 startTime, 2.0.1 log.oldestTimestamp)'),
    via: z
      .enum(['http', 'ftp'])
      .optional()
      .describe('Upload over HTTP or FTP; default FTP for a 1.6 station when logs.ftp is configured, HTTP otherwise'),
  })
  .register(apiSchemas, { id: 'StationLogRequest' });

export const logParamsSchema = z.strictObject({ id: z.string().min(1).max(64), logId: z.string().min(1).max(64) });

export const logAcceptedSchema = z
  .strictObject({
    logId: z.string(),
    state: z.string().describe('accepted, or further along when the station was quick'),
  })
  .register(apiSchemas, { id: 'StationLogAccepted' });

export const logRecordSchema = z
  .strictObject({
    logId: z.string(),
    stationId: z.string(),
    who: z.string().describe('cli, or the API client id'),
    via: z.enum(['http', 'ftp']),
    since: z.string().nullable(),
    requestId: z.number().int().describe('The GetLog requestId (2.0.1)'),
    requestedAt: z.string().describe('RFC 3339'),
    state: z
      .enum(['requested', 'accepted', 'uploading', 'received', 'uploaded', 'failed'])
      .describe('received: the file is here, the station has not said Uploaded yet; uploaded and failed are final'),
    reason: z.string().nullable().describe('Why it failed'),
    file: z
      .strictObject({
        name: z.string(),
        bytes: z.number().int(),
        removed: z.string().nullable().describe('Why the file is gone (logs.maxTotalBytes, logs.retainDays)'),
      })
      .nullable()
      .describe('The file kept; GET .../logs/{logId}/file downloads it'),
    updatedAt: z.string(),
  })
  .register(apiSchemas, { id: 'StationLog' });
