import { z } from 'zod';
import { id, millis, port, seconds } from './schema-values.js';

/* docs/install/modbus-meters.md#modbus-meters and docs/configuration/circuits.md#circuits-load-management: a meter's connection, registers and role. */

/**
 * Pacing and recovery of one Modbus bus or socket. Serial meters need a quiet gap between requests and a longer
 * one when the next request addresses another unit; meters sharing a bus get the most cautious value of each.
 */
const busTiming = (delayMs: number, unitChangeDelayMs: number) => ({
  interRequestDelayMs: z.number().int().min(0).max(10_000).default(delayMs),
  unitChangeDelayMs: z.number().int().min(0).max(10_000).default(unitChangeDelayMs),
  reconnectMinMs: millis.default(1000),
  reconnectMaxMs: millis.default(10_000),
});

const modbusConnection = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('tcp'),
    host: z.string().min(1),
    port: port.default(502),
    unitId: z.number().int().min(0).max(255).default(1),
    timeoutMs: millis.default(1000),
    ...busTiming(0, 0),
  }),
  z.strictObject({
    type: z.literal('rtu'),
    device: z.string().min(1),
    baudRate: z.number().int().positive().default(9600),
    parity: z.enum(['none', 'even', 'odd']).default('none'),
    dataBits: z.union([z.literal(7), z.literal(8)]).default(8),
    stopBits: z.union([z.literal(1), z.literal(2)]).default(1),
    unitId: z.number().int().min(0).max(255).default(1),
    timeoutMs: millis.default(1000),
    ...busTiming(100, 200),
  }),
  z.strictObject({
    type: z.literal('rtuovertcp'),
    host: z.string().min(1),
    port,
    unitId: z.number().int().min(0).max(255).default(1),
    timeoutMs: millis.default(1000),
    ...busTiming(100, 200),
  }),
]);

/** The physical bus or socket a meter talks through: meters with the same key share one request queue. */
export function modbusBusKey(connection: z.output<typeof modbusConnection>): string {
  return connection.type === 'rtu'
    ? `rtu:${connection.device}`
    : `${connection.type}://${connection.host}:${connection.port}`;
}

export const registerSpec = z.strictObject({
  functionCode: z.union([z.literal(3), z.literal(4)]),
  address: z.number().int().min(0).max(65535),
  type: z.enum(['float32', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64']),
  wordOrder: z.enum(['big', 'little']).default('big'),
  scale: z.number().default(1),
});

/** What every meter has, whatever it measures. */
const meterBase = {
  id,
  model: z.enum(['sdm630', 'sdm120', 'abb-b23', 'em340', 'custom']),
  registers: z
    .strictObject({
      energyImportKWh: registerSpec,
      currentA: z.array(registerSpec).min(1).max(3),
      powerW: registerSpec.optional(),
      // Unwanted registers one request may read across to join two wanted ranges (0: contiguous ranges only).
      maxReadGap: z.number().int().min(0).max(100).default(0),
    })
    .optional(),
  connection: modbusConnection,
  pollIntervalMs: z.number().int().min(50).default(1000),
};

/** A meter on a charger that speaks no OCPP: its readings become that charge point's sessions. */
const sessionMeter = z.strictObject({
  role: z.literal('session').default('session'),
  ...meterBase,
  chargePointId: id,
  connectorId: z.number().int().min(1),
  detection: z
    .strictObject({
      startCurrentA: z.number().nonnegative().default(1.0),
      startDelayS: seconds.default(10),
      stopCurrentA: z.number().nonnegative().default(0.5),
      stopDelayS: seconds.default(60),
      offlineAfterS: seconds.default(30),
      // Optional power thresholds: a session also starts above startPowerW and stops only below stopPowerW.
      startPowerW: z.number().nonnegative().optional(),
      stopPowerW: z.number().nonnegative().optional(),
    })
    .prefault({}),
  idTag: z.string().min(1).max(20).optional(),
});

/** A meter on a circuit (docs/configuration/circuits.md#circuits-load-management): it measures what the circuit draws and detects no sessions. */
const circuitMeter = z.strictObject({
  role: z.literal('circuit'),
  ...meterBase,
  // A lost circuit meter sends the circuit's connectors to their failsafe, after the same silence as any meter.
  detection: z.strictObject({ offlineAfterS: seconds.default(30) }).prefault({}),
});

export const meter = z
  .discriminatedUnion('role', [sessionMeter, circuitMeter], { error: 'session or circuit' })
  .superRefine((m, ctx) => {
    if (m.model === 'custom' && !m.registers)
      ctx.addIssue({ code: 'custom', path: ['registers'], message: 'required when model is custom' });
    if (m.model !== 'custom' && m.registers)
      ctx.addIssue({ code: 'custom', path: ['registers'], message: 'only allowed when model is custom' });
    if (m.connection.reconnectMinMs > m.connection.reconnectMaxMs)
      ctx.addIssue({
        code: 'custom',
        path: ['connection', 'reconnectMinMs'],
        message: `must not exceed reconnectMaxMs (${m.connection.reconnectMaxMs})`,
      });
    if (m.role === 'circuit') return;
    const d = m.detection;
    if (d.stopCurrentA > d.startCurrentA)
      ctx.addIssue({
        code: 'custom',
        path: ['detection', 'stopCurrentA'],
        message: `must not exceed startCurrentA (${d.startCurrentA})`,
      });
    if (d.startPowerW === undefined && d.stopPowerW !== undefined)
      ctx.addIssue({ code: 'custom', path: ['detection', 'startPowerW'], message: 'required when stopPowerW is set' });
    if (d.startPowerW !== undefined && (d.stopPowerW ?? 0) > d.startPowerW)
      ctx.addIssue({
        code: 'custom',
        path: ['detection', 'stopPowerW'],
        message: `must not exceed startPowerW (${d.startPowerW})`,
      });
  });

/**
 * A meter id is its station id in transactions and events, so it is unique across sites and stations. Meters
 * sharing a bus need distinct unit ids and one set of serial settings; a gateway port speaks one framing.
 */
export function meterConflicts(
  sites: ReadonlyArray<{ meters: ReadonlyArray<z.output<typeof meter>> }>,
  stationIds: ReadonlyMap<string, string>,
  ctx: z.RefinementCtx,
): void {
  const meterSites = new Map<string, number>();
  const units = new Set<string>();
  const serial = new Map<string, string>();
  const framing = new Map<string, string>();
  sites.forEach((s, si) =>
    s.meters.forEach((m, mi) => {
      const at = ['sites', si, 'meters', mi];
      if (stationIds.has(m.id))
        ctx.addIssue({ code: 'custom', path: [...at, 'id'], message: `"${m.id}" is already a station id` });
      const firstSite = meterSites.get(m.id);
      if (firstSite !== undefined && firstSite !== si)
        ctx.addIssue({
          code: 'custom',
          path: [...at, 'id'],
          message: `meter "${m.id}" is already in sites[${firstSite}]`,
        });
      meterSites.set(m.id, firstSite ?? si);
      const c = m.connection;
      const bus = modbusBusKey(c);
      const unitKey = `${bus}#${c.unitId}`;
      if (units.has(unitKey))
        ctx.addIssue({
          code: 'custom',
          path: [...at, 'connection', 'unitId'],
          message: `unit ${c.unitId} on ${bus} is already used by another meter`,
        });
      units.add(unitKey);
      if (c.type === 'rtu') {
        const settings = `${c.baudRate} ${c.dataBits}${c.parity[0]?.toUpperCase()}${c.stopBits}`;
        const other = serial.get(c.device);
        if (other !== undefined && other !== settings)
          ctx.addIssue({
            code: 'custom',
            path: [...at, 'connection'],
            message: `${c.device} is already used at ${other}; meters on one bus need the same serial settings`,
          });
        serial.set(c.device, other ?? settings);
      } else {
        const endpoint = `${c.host}:${c.port}`;
        const other = framing.get(endpoint);
        if (other !== undefined && other !== c.type)
          ctx.addIssue({
            code: 'custom',
            path: [...at, 'connection', 'type'],
            message: `${endpoint} is already used as ${other}`,
          });
        framing.set(endpoint, other ?? c.type);
      }
    }),
  );
}

export type RegisterSpec = z.output<typeof registerSpec>;
