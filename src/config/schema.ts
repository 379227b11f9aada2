import { z } from 'zod';

/** Event types of interface document section 2.2. */
export const EVENT_TYPES = ['Authorize', 'StartTransaction', 'StopTransaction', 'ChargePointStatus'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const id = z.string().min(1).regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only');
const port = z.number().int().min(0).max(65535);
const seconds = z.number().positive();

const modbusConnection = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('tcp'), host: z.string().min(1), port: port.default(502), unitId: z.number().int().min(0).max(255).default(1), timeoutMs: z.number().int().positive().default(1000) }),
  z.strictObject({
    type: z.literal('rtu'),
    device: z.string().min(1),
    baudRate: z.number().int().positive().default(9600),
    parity: z.enum(['none', 'even', 'odd']).default('none'),
    dataBits: z.union([z.literal(7), z.literal(8)]).default(8),
    stopBits: z.union([z.literal(1), z.literal(2)]).default(1),
    unitId: z.number().int().min(0).max(255).default(1),
    timeoutMs: z.number().int().positive().default(1000),
  }),
  z.strictObject({ type: z.literal('rtuovertcp'), host: z.string().min(1), port, unitId: z.number().int().min(0).max(255).default(1), timeoutMs: z.number().int().positive().default(1000) }),
]);

const registerSpec = z.strictObject({
  functionCode: z.union([z.literal(3), z.literal(4)]),
  address: z.number().int().min(0).max(65535),
  type: z.enum(['float32', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64']),
  wordOrder: z.enum(['big', 'little']).default('big'),
  scale: z.number().default(1),
});

const meter = z
  .strictObject({
    id,
    chargePointId: id,
    connectorId: z.number().int().min(1),
    model: z.enum(['sdm630', 'sdm120', 'abb-b23', 'em340', 'custom']),
    registers: z
      .strictObject({
        energyImportKWh: registerSpec,
        currentA: z.array(registerSpec).min(1).max(3),
        powerW: registerSpec.optional(),
      })
      .optional(),
    connection: modbusConnection,
    pollIntervalMs: z.number().int().min(50).default(1000),
    detection: z
      .strictObject({
        startCurrentA: z.number().nonnegative().default(1.0),
        startDelayS: z.number().nonnegative().default(10),
        stopCurrentA: z.number().nonnegative().default(0.5),
        stopDelayS: z.number().nonnegative().default(60),
        offlineAfterS: z.number().positive().default(30),
      })
      .prefault({}),
    idTag: z.string().min(1).max(20).optional(),
  })
  .superRefine((m, ctx) => {
    if (m.model === 'custom' && !m.registers) ctx.addIssue({ code: 'custom', path: ['registers'], message: 'required when model is custom' });
    if (m.model !== 'custom' && m.registers) ctx.addIssue({ code: 'custom', path: ['registers'], message: 'only allowed when model is custom' });
  });

const webhookAuth = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('none') }),
  z.strictObject({ type: z.literal('basic'), username: z.string().min(1), password: z.string() }),
  z.strictObject({ type: z.literal('token'), token: z.string().min(1) }),
  z.strictObject({
    type: z.literal('oauth2'),
    tokenUrl: z.url({ protocol: /^https?$/ }),
    clientId: z.string().min(1),
    clientSecret: z.string().min(1),
    scope: z.string().optional(),
    audience: z.string().optional(),
  }),
]);

const webhook = z.strictObject({
  id,
  url: z.url({ protocol: /^https?$/, error: 'an http:// or https:// URL' }),
  enabled: z.boolean().default(true),
  events: z.array(z.enum(EVENT_TYPES)).min(1).default([...EVENT_TYPES]),
  auth: webhookAuth.default({ type: 'none' }),
  signature: z.enum(['documented', 'rfc9421']).default('documented'),
});

const chargePoint = z.strictObject({ id, connectors: z.array(z.number().int().min(1)).min(1) });

const station = z.strictObject({ id, chargePoints: z.array(chargePoint).default([]) });

const site = z.strictObject({
  id,
  stations: z.array(station).default([]),
  meters: z.array(meter).default([]),
  webhooks: z.array(webhook).default([]),
});

const scope = z.string().regex(/^(company|site|station|chargePoint):[A-Za-z0-9._:-]+$/, 'company:<id>, site:<id>, station:<id> or chargePoint:<id>');

export const PERMISSIONS = ['charge-points:read', 'charge-points:control'] as const;

const group = z.strictObject({ id, scope, permissions: z.array(z.enum(PERMISSIONS)).min(1) });

export const configSchema = z
  .strictObject({
    dataDir: z.string().min(1).default('./var'),
    timezone: z
      .string()
      .default('Europe/Brussels')
      .refine((tz) => {
        try {
          new Intl.DateTimeFormat('en', { timeZone: tz });
          return true;
        } catch {
          return false;
        }
      }, 'an IANA time zone such as Europe/Brussels'),
    log: z.strictObject({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info') }).prefault({}),
    http: z
      .strictObject({ host: z.string().default('127.0.0.1'), port: port.default(8080), issuer: z.url().optional() })
      .prefault({})
      .transform((h) => ({ ...h, issuer: (h.issuer ?? `http://${h.host}:${h.port}`).replace(/\/$/, '') })),
    ocpp: z
      .strictObject({
        host: z.string().default('127.0.0.1'),
        port: port.default(9000),
        path: z.string().startsWith('/').default('/ocpp'),
        securityProfile: z.union([z.literal(0), z.literal(1), z.literal(2)]).default(1),
        acceptUnknownStations: z.boolean().default(false),
        heartbeatIntervalS: z.number().int().positive().default(300),
        callTimeoutMs: z.number().int().positive().default(30_000),
        tls: z.strictObject({ cert: z.string().min(1), key: z.string().min(1) }).optional(),
      })
      .prefault({}),
    company: z.strictObject({ id }).prefault({ id: 'company' }),
    sites: z.array(site).min(1),
    authorization: z
      .strictObject({ allowConcurrentTx: z.boolean().default(false), plugin: z.string().min(1).nullable().default(null) })
      .prefault({}),
    upstream: z.strictObject({ url: z.url({ protocol: /^wss?$/ }), timeoutMs: z.number().int().positive().default(5000) }).nullable().default(null),
    groups: z.array(group).default([]),
    webhookDelivery: z
      .strictObject({
        retryIntervalS: seconds.default(10),
        maxRetries: z.number().int().nonnegative().default(360),
        queueCapacity: z.number().int().positive().default(1000),
        requestTimeoutMs: z.number().int().positive().default(10_000),
      })
      .prefault({}),
    keystore: z
      .strictObject({
        passphraseEnv: z.string().min(1).default('CHARGEGATE_KEYSTORE_PASSPHRASE'),
        retiredKeyGraceS: z.number().int().min(0).default(86_400),
        // systemd credential (file under $CREDENTIALS_DIRECTORY) used when passphraseEnv is unset.
        passphraseCredential: z.string().min(1).regex(/^[^/]+$/, 'a file name, no directory').default('keystore-passphrase'),
        // `keys rotate` publishes the next key this long before it signs: verifiers that cache the JWKS see it first.
        nextKeyLeadS: z.number().min(0).default(600),
      })
      .prefault({}),
  })
  .superRefine((c, ctx) => {
    uniqueIds(c.sites, ['sites'], ctx);
    uniqueIds(c.groups, ['groups'], ctx);
    const stationIds = new Map<string, string>();
    const chargePointIds = new Set<string>();
    c.sites.forEach((s, si) => {
      uniqueIds(s.webhooks, ['sites', si, 'webhooks'], ctx);
      uniqueIds(s.meters, ['sites', si, 'meters'], ctx);
      s.stations.forEach((st, sti) => {
        if (stationIds.has(st.id)) ctx.addIssue({ code: 'custom', path: ['sites', si, 'stations', sti, 'id'], message: `duplicate station id "${st.id}"` });
        stationIds.set(st.id, s.id);
        const connectors = new Set<number>();
        st.chargePoints.forEach((cp, cpi) => {
          if (chargePointIds.has(cp.id)) ctx.addIssue({ code: 'custom', path: ['sites', si, 'stations', sti, 'chargePoints', cpi, 'id'], message: `duplicate charge point id "${cp.id}"` });
          chargePointIds.add(cp.id);
          for (const n of cp.connectors) {
            if (connectors.has(n)) ctx.addIssue({ code: 'custom', path: ['sites', si, 'stations', sti, 'chargePoints', cpi, 'connectors'], message: `connector ${n} belongs to two charge points` });
            connectors.add(n);
          }
        });
      });
      s.meters.forEach((m, mi) => {
        if (chargePointIds.has(m.chargePointId)) ctx.addIssue({ code: 'custom', path: ['sites', si, 'meters', mi, 'chargePointId'], message: `charge point "${m.chargePointId}" is already used` });
        chargePointIds.add(m.chargePointId);
      });
    });
    if (c.ocpp.securityProfile === 2 && !c.ocpp.tls) ctx.addIssue({ code: 'custom', path: ['ocpp', 'tls'], message: 'required when securityProfile is 2 ({ cert, key })' });
    c.groups.forEach((g, gi) => {
      const [level, target] = g.scope.split(/:(.*)/s) as [string, string];
      const known =
        (level === 'company' && target === c.company.id) ||
        (level === 'site' && c.sites.some((s) => s.id === target)) ||
        level === 'station' ||
        level === 'chargePoint';
      if (!known) ctx.addIssue({ code: 'custom', path: ['groups', gi, 'scope'], message: `no ${level} "${target}" in this config` });
    });
  });

function uniqueIds(items: ReadonlyArray<{ id: string }>, path: (string | number)[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(item.id)) ctx.addIssue({ code: 'custom', path: [...path, i, 'id'], message: `duplicate id "${item.id}"` });
    seen.add(item.id);
  });
}

export type Config = z.output<typeof configSchema>;
export type SiteConfig = Config['sites'][number];
export type StationConfig = SiteConfig['stations'][number];
export type MeterConfig = SiteConfig['meters'][number];
export type WebhookConfig = SiteConfig['webhooks'][number];
export type WebhookAuthConfig = WebhookConfig['auth'];
export type GroupConfig = Config['groups'][number];
export type RegisterSpec = z.output<typeof registerSpec>;
export type Permission = (typeof PERMISSIONS)[number];
