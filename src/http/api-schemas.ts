import { z } from 'zod';
import { formatKeyPath } from '../config/index.js';
import {
  limitCurrentProblem,
  limitUntilProblem,
  MAX_TEMPORARY_LIMIT_A,
  MAX_TEMPORARY_LIMIT_DAYS,
  TEMPORARY_LIMIT_STEP_A,
} from '../load/index.js';
import { API_ERROR_CODES, ApiError } from './http-errors.js';

/**
 * The API's bodies, defined once: the routes validate with them and GET /openapi.json publishes them as JSON
 * Schema, so the description cannot drift from what the server accepts.
 */
export const apiSchemas = z.registry<{ id: string }>();

export const connectorStateSchema = z
  .strictObject({
    connectorId: z.number().int().describe('Connector number on the charge point'),
    status: z
      .string()
      .describe(
        'Last OCPP 1.6 ChargePointStatus reported (Available, Preparing, Charging, ...); Unavailable when never reported',
      ),
    errorCode: z.string().describe('Last OCPP 1.6 ChargePointErrorCode (NoError, ...)'),
    transactionId: z.number().int().optional().describe('The open transaction on this connector, if any'),
  })
  .register(apiSchemas, { id: 'ConnectorState' });

export const chargePointSchema = z
  .strictObject({
    chargePointId: z.string(),
    stationId: z.string().describe('OCPP station (or Modbus meter) the charge point belongs to'),
    siteId: z.string(),
    online: z.boolean().describe('Whether the station is connected now (for a Modbus meter: whether it answers)'),
    connectors: z.array(connectorStateSchema),
  })
  .register(apiSchemas, { id: 'ChargePoint' });

export const chargePointListSchema = z.array(chargePointSchema).register(apiSchemas, { id: 'ChargePointList' });

export const chargePointParamsSchema = z.strictObject({ chargePointId: z.string().min(1) });

export const startRequestSchema = z
  .strictObject({
    connectorId: z.number().int().min(1).describe('Connector to start charging on'),
    idTag: z
      .string()
      .min(1)
      .max(20)
      .describe('Identification tag the transaction runs under (OCPP IdToken, at most 20 characters)'),
  })
  .register(apiSchemas, { id: 'StartRequest' });

export const stopRequestSchema = z
  .strictObject({
    transactionId: z
      .number()
      .int()
      .min(1)
      .describe('Transaction to stop, as GET /charge-points or the StartTransaction webhook reports it'),
  })
  .register(apiSchemas, { id: 'StopRequest' });

export const commandAcceptedSchema = z
  .strictObject({
    status: z
      .literal('Accepted')
      .describe("The station accepted the command; the transaction's StartTransaction/StopTransaction webhook follows"),
    chargePointId: z.string(),
    stationId: z.string(),
  })
  .register(apiSchemas, { id: 'CommandAccepted' });

const zonedTime = (description: string) =>
  z.string().describe(`${description}, in the site's time zone with milliseconds and offset (as webhook timestamps)`);

export const transactionSchema = z
  .strictObject({
    transactionId: z.number().int(),
    stationId: z.string(),
    chargePointId: z.string(),
    connectorId: z.number().int(),
    idTag: z.string().describe('The tag the transaction started with'),
    startedAt: zonedTime("The station's start time"),
    stoppedAt: zonedTime("The station's stop time").nullable().describe('Null while the transaction is open'),
    meterStart: z.number().describe('kWh'),
    meterStop: z.number().nullable().describe('kWh; null while open'),
    reason: z.string().nullable().describe('OCPP stop reason as the station gave it (null when none)'),
  })
  .register(apiSchemas, { id: 'Transaction' });

export const signedMeterValueSchema = z
  .strictObject({
    context: z.string().describe('OCPP reading context: Transaction.Begin, Sample.Periodic, Transaction.End, ...'),
    timestamp: zonedTime("The station's time of the reading"),
    encodingMethod: z.string().nullable().describe('OCMF, or what the station named; null when it named none'),
    signingMethod: z.string().nullable(),
    signedMeterData: z.string().describe('Exactly as the station sent it (an OCMF record, or base64 of one)'),
    publicKey: z.string().nullable().describe('The key the station sent with the reading, as sent'),
    verified: z
      .boolean()
      .nullable()
      .describe('Checked by the gateway when it arrived; null: no key known, or an algorithm it cannot check'),
    consistent: z
      .boolean()
      .optional()
      .describe('For a Begin or End reading: whether its signed value agrees with meterStart or meterStop'),
  })
  .register(apiSchemas, { id: 'SignedMeterValue' });

export const meterReadingSchema = z
  .strictObject({
    context: z.string().describe('OCPP reading context: Transaction.Begin, Sample.Periodic, Transaction.End, ...'),
    timestamp: zonedTime("The station's time of the reading"),
    energy: z.number().describe('Energy.Active.Import.Register, kWh'),
  })
  .register(apiSchemas, { id: 'MeterReading' });

export const transactionDetailSchema = transactionSchema
  .extend({
    readings: z
      .array(meterReadingSchema)
      .describe(
        'The plain register readings kept: Begin, End and periodic samples at most one per 15 minutes (the latest 96)',
      ),
    signedMeterValues: z
      .array(signedMeterValueSchema)
      .describe('Every signed reading kept for the transaction, in the order they arrived'),
  })
  .register(apiSchemas, { id: 'TransactionDetail' });

export const transactionParamsSchema = z.strictObject({
  transactionId: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
});

export const transactionListSchema = z.array(transactionSchema).register(apiSchemas, { id: 'TransactionList' });

/** A field's message: `required` when it is absent, else what was expected. */
const requiredOr =
  (expected: string) =>
  (issue: { input: unknown }): string =>
    issue.input === undefined ? 'required' : expected;

export const circuitParamsSchema = z.strictObject({ siteId: z.string().min(1), circuitId: z.string().min(1) });

export const temporaryLimitRequestSchema = z
  .strictObject({
    maxCurrentA: z
      .number({ error: requiredOr('expected a number of amperes') })
      .superRefine((maxCurrentA, ctx) => {
        const problem = limitCurrentProblem(maxCurrentA);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .meta({
        minimum: TEMPORARY_LIMIT_STEP_A,
        maximum: MAX_TEMPORARY_LIMIT_A,
        multipleOf: TEMPORARY_LIMIT_STEP_A,
        description:
          'Per phase, to a tenth of an ampere (as `chargegate load limit --current` takes it). The circuit carries the lower of this and its configured maxCurrentA: a temporary limit only lowers',
      }),
    until: z
      .string({ error: requiredOr('expected an ISO 8601 date-time string') })
      .superRefine((until, ctx) => {
        const problem = limitUntilProblem(until, new Date());
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .meta({
        format: 'date-time',
        description: `When the limit ends: an ISO 8601 date-time with seconds and an offset (Z or +hh:mm), in the future and at most ${MAX_TEMPORARY_LIMIT_DAYS} days ahead. It survives a gateway restart until then`,
      }),
  })
  .register(apiSchemas, { id: 'TemporaryLimitRequest' });

export const circuitLimitSchema = z
  .strictObject({
    siteId: z.string(),
    circuitId: z.string(),
    configuredMaxCurrentA: z.number().describe("The circuit's maxCurrentA in the config, A per phase"),
    temporaryLimit: z
      .strictObject({
        maxCurrentA: z.number().describe('A per phase, as set'),
        until: zonedTime('When it ends'),
        setAt: zonedTime('When it was set'),
        setBy: z.string().describe('Who set it: `api:<clientId>` or `cli`'),
      })
      .nullable()
      .describe('The temporary limit in force; null when there is none (an ended one is not shown)'),
    effectiveMaxCurrentA: z
      .number()
      .describe('What the circuit may carry now, A per phase: the lower of the configured and the temporary limit'),
  })
  .register(apiSchemas, { id: 'CircuitLimit' });

export const TRANSACTIONS_MAX_LIMIT = 10_000;

const EARLIEST_INSTANT_MS = Date.parse('0000-01-01T00:00:00.000Z');
const LATEST_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * An instant whose UTC form has a four-digit year: stored start times compare with it as text (an offset can carry 9999
 * into 10000).
 */
const historyInstant = z.iso.datetime({ offset: true }).refine((iso) => {
  const ms = Date.parse(iso);
  return ms >= EARLIEST_INSTANT_MS && ms <= LATEST_INSTANT_MS;
}, 'an instant from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z');

export const transactionsQuerySchema = z.strictObject({
  from: historyInstant.optional().describe('Started at or after this instant'),
  to: historyInstant.optional().describe('Started before this instant'),
  status: z.enum(['open', 'stopped']).optional(),
  after: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Only transactions with a larger transactionId: the next page'),
  limit: z.coerce.number().int().min(1).max(TRANSACTIONS_MAX_LIMIT).default(1000),
});

export const EVENTS_MAX_LIMIT = 1000;

export const eventsQuerySchema = z.strictObject({
  after: z
    .string()
    .regex(/^\d*$/, 'a cursor from an earlier answer')
    // Past the largest safe integer a cursor would come back rounded (1e+29), a form this schema refuses.
    .refine(
      (cursor) => Number.isSafeInteger(Number(cursor)),
      `a cursor from an earlier answer (at most ${Number.MAX_SAFE_INTEGER})`,
    )
    .optional()
    .describe('The cursor of the last event you have; empty or absent starts at the oldest event kept'),
  limit: z.coerce.number().int().min(1).max(EVENTS_MAX_LIMIT).default(100),
});

export const eventPageSchema = z
  .strictObject({
    events: z.array(
      z
        .looseObject({
          cursor: z.string().describe('Pass as `after` to continue behind this event'),
          eventId: z.string(),
          eventType: z.string(),
          siteId: z.string(),
          timestamp: z.string().describe('When this answer was made'),
          occurredAt: z.string(),
          payload: z.looseObject({}),
        })
        .describe(
          'The envelope a webhook carries (docs/partners/webhooks.md#receiving-webhooks-partners), without a signature, plus its cursor',
        ),
    ),
    cursor: z
      .string()
      .describe('Pass as `after` for the next page; the same as `after` when nothing new has been committed'),
  })
  .register(apiSchemas, { id: 'EventPage' });

export const siteParamsSchema = z.strictObject({ siteId: z.string().min(1) });

const phaseCurrentsSchema = (description: string) =>
  z.strictObject({ L1: z.number(), L2: z.number(), L3: z.number() }).describe(`${description}, A per phase`);

export const circuitStatusSchema = z
  .strictObject({
    circuitId: z.string(),
    parent: z.string().optional().describe('The circuit this one is part of'),
    maxCurrentA: z
      .number()
      .describe('The limit per phase that holds now: the configured one, or a lower temporary one'),
    configuredMaxCurrentA: z.number().describe("The circuit's maxCurrentA in the config, A per phase"),
    temporaryLimit: z
      .strictObject({
        maxCurrentA: z.number().describe('A per phase, as set'),
        until: z.string().describe('When it ends, ISO 8601 in UTC'),
        setBy: z.string().describe('Who set it: `api:<clientId>` or `cli`'),
      })
      .optional()
      .describe('The temporary limit in force (PUT /sites/{siteId}/circuits/{circuitId}/limit); absent when none'),
    maxPowerW: z.number().optional(),
    meterId: z.string().optional().describe('The `role: circuit` meter that measures it'),
    meter: z
      .enum(['none', 'ok', 'lost'])
      .describe('No meter; its meter gives readings; its meter is lost (the circuit is on the fail-safe)'),
    measuredA: phaseCurrentsSchema('What its meter measured last').optional().describe('Absent without readings'),
    otherA: phaseCurrentsSchema(
      'Load that is not a managed connector: measured minus what the cars report drawing; without a meter, uncontrolled connectors at their maxCurrentA',
    ),
    headroomA: z
      .number()
      .describe(
        'What the sharing connectors share: the limit minus the other load and the fail-safe allowances on the most loaded phase',
      ),
    allowedA: phaseCurrentsSchema(
      'What the controllable charging connectors on it and below may draw together (without a meter, otherA plus this stays within the limit)',
    ),
  })
  .register(apiSchemas, { id: 'CircuitStatus' });

export const managedConnectorSchema = z
  .strictObject({
    chargePointId: z.string(),
    connectorId: z.number().int(),
    stationId: z.string().optional().describe('The OCPP station; absent for a Modbus-only charger'),
    circuitId: z.string(),
    state: z
      .enum(['sharing', 'waiting', 'failsafe', 'uncontrolled', 'idle'])
      .describe(
        'sharing: charging on its share; waiting: charging, held at 0 A until its turn; failsafe: at the fail-safe (meter lost); uncontrolled: takes no profile, counted at its maxCurrentA; idle: no transaction',
      ),
    allowedA: z.number().optional().describe('What it may draw per phase now; absent while idle'),
    drawnA: z.number().optional().describe('What its car last reported drawing per phase'),
    transactionId: z.number().int().optional(),
  })
  .register(apiSchemas, { id: 'ManagedConnector' });

export const siteCircuitsSchema = z
  .strictObject({
    siteId: z.string(),
    circuits: z.array(circuitStatusSchema).describe('Empty when the site has no circuits'),
    connectors: z.array(managedConnectorSchema).describe('The connectors of the charge points on its circuits'),
  })
  .register(apiSchemas, { id: 'SiteCircuits' });

export const errorSchema = z
  .looseObject({
    error: z.enum(API_ERROR_CODES).describe('Machine-readable error code'),
    message: z.string().describe('What went wrong, for a human'),
  })
  .register(apiSchemas, { id: 'Error' });

/** Validates a request part; a mismatch is a 400 naming every offending field. */
export function parseRequest<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => ({
    path: formatKeyPath(issue.path),
    message: issue.message.replace(/^Invalid input: /, ''),
  }));
  throw new ApiError(
    400,
    'invalid_request',
    `${what}: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`,
    {},
    { problems },
  );
}
