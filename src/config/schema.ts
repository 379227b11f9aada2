import { z } from 'zod';
import { CHARGE_POINT_DEFAULTS, circuitProblems, withInheritedFailsafe } from './circuits.js';
import { isLoopbackHost } from './hosts.js';
import { meter, meterConflicts } from './meter-schema.js';
import { atMost, id, millis, port, seconds } from './schema-values.js';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
import { MeterKeyError, parseMeterPublicKey } from '../meter-signatures/index.js';

/** The four webhook event types partners receive (docs/partners/webhooks.md#receiving-webhooks-partners). */
export const EVENT_TYPES = ['Authorize', 'StartTransaction', 'StopTransaction', 'ChargePointStatus'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

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
    // How the client authenticates at the partner's token endpoint (RFC 6749 2.3.1; Basic is the one servers must
    // support).
    tokenEndpointAuthMethod: z.enum(['client_secret_basic', 'client_secret_post']).default('client_secret_basic'),
  }),
]);

/**
 * How a webhook's requests are signed (docs/partners/webhooks.md#checking-the-signature). The string forms are the first releases';
 * the object form picks rfc9421's algorithm. All become one shape, so signing reads `profile` and `alg` only. The
 * documented profile is RSA-PSS-SHA256 and nothing else: partners were promised exactly that form.
 */
const SIGNATURE_ALGS: readonly unknown[] = ['rsa-pss-sha256', 'rsa-pss-sha512', 'ed25519'];

const webhookSignature = z
  .union(
    [
      z.enum(['documented', 'rfc9421']),
      // alg is checked below, so that a typo is told at its own key path rather than as no form of the union.
      z.strictObject({ profile: z.enum(['documented', 'rfc9421']), alg: z.unknown().optional() }),
    ],
    { error: 'documented, rfc9421, or { profile: rfc9421, alg: ed25519 | rsa-pss-sha512 }' },
  )
  .default('documented')
  .superRefine((s, ctx) => {
    if (typeof s === 'string' || s.alg === undefined) return;
    if (!SIGNATURE_ALGS.includes(s.alg))
      return ctx.addIssue({
        code: 'custom',
        path: ['alg'],
        message: `${JSON.stringify(s.alg)} is none of ed25519, rsa-pss-sha512 (profile rfc9421), rsa-pss-sha256 (profile documented)`,
      });
    if (s.profile === 'documented' && s.alg !== 'rsa-pss-sha256')
      ctx.addIssue({
        code: 'custom',
        path: ['alg'],
        message: 'the documented profile is rsa-pss-sha256 only; ed25519 and rsa-pss-sha512 need profile rfc9421',
      });
    if (s.profile === 'rfc9421' && s.alg === 'rsa-pss-sha256')
      ctx.addIssue({ code: 'custom', path: ['alg'], message: 'rfc9421 signs with ed25519 or rsa-pss-sha512' });
  })
  .transform((s): WebhookSignature => {
    const profile = typeof s === 'string' ? s : s.profile;
    if (profile === 'documented') return { profile, alg: 'rsa-pss-sha256' };
    return { profile, alg: typeof s === 'object' && s.alg === 'ed25519' ? 'ed25519' : 'rsa-pss-sha512' };
  });

/** A webhook's signature, normalised: the profile and the algorithm it signs with. */
export type WebhookSignature =
  { profile: 'documented'; alg: 'rsa-pss-sha256' } | { profile: 'rfc9421'; alg: 'rsa-pss-sha512' | 'ed25519' };

const retryWaitS = z.number().positive().max(86_400, atMost(86_400));

const webhook = z.strictObject({
  id,
  url: z.url({ protocol: /^https?$/, error: 'an http:// or https:// URL' }),
  enabled: z.boolean().default(true),
  events: z
    .array(z.enum(EVENT_TYPES))
    .min(1)
    .default([...EVENT_TYPES]),
  auth: webhookAuth.default({ type: 'none' }),
  signature: webhookSignature,
});

const chargePoint = z.strictObject({ id, connectors: z.array(z.number().int().min(1)).min(1) });

/** docs/partners/signed-meter-values.md#signed-meter-values: a meter key the installer pins (PEM, or hex or base64 of its DER SPKI). */
const meterPublicKey = z.string().superRefine((key, ctx) => {
  try {
    parseMeterPublicKey(key);
  } catch (err) {
    if (!(err instanceof MeterKeyError)) throw err;
    ctx.addIssue({ code: 'custom', message: err.message });
  }
});

const station = z.strictObject({
  id,
  chargePoints: z.array(chargePoint).default([]),
  meterPublicKeys: z.array(meterPublicKey).max(16, atMost(16)).default([]),
});

/** Per phase; a site connection of a few MVA stays well below it, a typo of a few zeros does not. */
const amperes = z.number().positive().max(10_000, atMost(10_000));

/** A charge point's electrical facts: what load management needs to share a circuit's current among them. */
const chargePointFacts = z
  .strictObject({
    id,
    maxCurrentA: amperes.default(CHARGE_POINT_DEFAULTS.maxCurrentA),
    phases: z.union([z.literal(1), z.literal(3)], { error: '1 or 3' }).default(CHARGE_POINT_DEFAULTS.phases),
    phase: z.enum(['L1', 'L2', 'L3']).optional(),
  })
  .superRefine((cp, ctx) => {
    if (cp.phases === 1 && !cp.phase)
      ctx.addIssue({ code: 'custom', path: ['phase'], message: 'required when phases is 1' });
    if (cp.phases === 3 && cp.phase)
      ctx.addIssue({ code: 'custom', path: ['phase'], message: 'only allowed when phases is 1' });
  });

const circuit = z.strictObject({
  id,
  parent: id.optional(),
  maxCurrentA: amperes,
  maxPowerW: z.number().positive().max(100_000_000, atMost(100_000_000)).optional(),
  meter: id.optional(),
  // Optional here: a child circuit inherits its parent's, which the whole site tells (withInheritedFailsafe).
  failsafeCurrentA: z.number().nonnegative().max(10_000, atMost(10_000)).optional(),
  chargePoints: z.array(id).default([]),
});

const site = z.strictObject({
  id,
  stations: z.array(station).default([]),
  meters: z.array(meter).default([]),
  // A charge point not listed here has CHARGE_POINT_DEFAULTS.
  chargePoints: z.array(chargePointFacts).default([]),
  circuits: z.array(circuit).default([]),
  webhooks: z.array(webhook).default([]),
});

const scope = z
  .string()
  .regex(
    /^(company|site|station|chargePoint):[A-Za-z0-9._:-]+$/,
    'company:<id>, site:<id>, station:<id> or chargePoint:<id>',
  );

/** docs/configuration/uplink.md#uplink-to-a-csms: the operator's central system each station is connected to through the gateway. */
const uplinkCsms = z.strictObject({
  url: z.url({ protocol: /^wss?$/ }),
  // 0: no auth, 1: basic auth, 2: basic auth over TLS, 3: TLS client certificate (the scheme must match).
  securityProfile: z
    .union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)], { error: '0, 1, 2 or 3' })
    .default(1),
  tls: z
    .strictObject({
      ca: z.string().min(1).optional(),
      cert: z.string().min(1).optional(),
      key: z.string().min(1).optional(),
    })
    .optional(),
  // Per station; past it the oldest periodic readings go first, starts, stops and signed readings never.
  queueLimit: z.number().int().positive().max(10_000_000, atMost(10_000_000)).default(100_000),
  // The same per station in payload bytes (16 MiB): a station sending large readings fills the disk no faster.
  queueBytesLimit: z
    .number()
    .int()
    .min(1_048_576, { error: 'at least 1048576 (1 MiB)' })
    .max(1_073_741_824, atMost(1_073_741_824))
    .default(16_777_216),
  // OCPP 1.6 TransactionMessageAttempts / TransactionMessageRetryInterval: a message the CSMS answers with a CALLERROR.
  transactionMessageAttempts: z.number().int().positive().max(100, atMost(100)).default(3),
  transactionMessageRetryIntervalS: seconds.default(60),
});

const upstreamSchema = z
  .strictObject({
    // Authorize forwarded to a CPO (docs/install/connecting-stations.md#connecting-a-station); exclusive with csms.
    url: z.url({ protocol: /^wss?$/ }).optional(),
    timeoutMs: millis.default(5000),
    // docs/configuration/uplink.md#uplink-to-a-csms: every OCPP station of the site also connected to the operator's central system.
    csms: uplinkCsms.optional(),
  })
  .nullable()
  .default(null);

const QUEUE_BYTES_PER_LARGEST_MESSAGE = 16;

/** upstream: exactly one of url (Authorize forwarding) and csms (the uplink); csms's scheme and TLS fit its profile. */
function upstreamProblems(
  upstream: z.output<typeof upstreamSchema>,
  maxMessageBytes: number,
  ctx: z.RefinementCtx,
): void {
  if (!upstream) return;
  const { url, csms } = upstream;
  if (url !== undefined && csms)
    ctx.addIssue({
      code: 'custom',
      path: ['upstream', 'csms'],
      message: 'not together with upstream.url: the uplink forwards Authorize itself; remove upstream.url',
    });
  if (url === undefined && !csms)
    ctx.addIssue({
      code: 'custom',
      path: ['upstream'],
      message: 'needs url (a CPO for Authorize) or csms (the uplink)',
    });
  if (!csms) return;
  const scheme = new URL(csms.url).protocol;
  const wanted = csms.securityProfile >= 2 ? 'wss:' : 'ws:';
  if (scheme !== wanted)
    ctx.addIssue({
      code: 'custom',
      path: ['upstream', 'csms', 'url'],
      message: `securityProfile ${csms.securityProfile} needs a ${wanted.slice(0, -1)}:// URL, not ${scheme.slice(0, -1)}://`,
    });
  // A station's queue counts as full once its next message might not fit (docs/design/uplink.md#uplink-what-the-csms-sees): a limit a
  // few of the largest messages fill would make a nearly empty queue critical.
  const leastQueueBytes = QUEUE_BYTES_PER_LARGEST_MESSAGE * maxMessageBytes;
  if (csms.queueBytesLimit < leastQueueBytes)
    ctx.addIssue({
      code: 'custom',
      path: ['upstream', 'csms', 'queueBytesLimit'],
      message: `at least ${QUEUE_BYTES_PER_LARGEST_MESSAGE} x ocpp.maxMessageBytes (${leastQueueBytes}): a queue must hold more than the few largest messages a station can send`,
    });
  if (csms.securityProfile === 3 && (!csms.tls?.cert || !csms.tls.key))
    ctx.addIssue({
      code: 'custom',
      path: ['upstream', 'csms', 'tls'],
      message: 'securityProfile 3 needs { cert, key }: the client certificate the CSMS knows the gateway by',
    });
}

export const PERMISSIONS = [
  'charge-points:read',
  'charge-points:control',
  'events:read',
  'status:read',
  'stations:read',
  'stations:operate',
] as const;

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
    log: z
      .strictObject({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info') })
      .prefault({}),
    http: z
      .strictObject({
        host: z.string().default('127.0.0.1'),
        port: port.default(8080),
        issuer: z.url().optional(),
        // HTTPS: client secrets and tokens must not cross a LAN in clear text.
        tls: z.strictObject({ cert: z.string().min(1), key: z.string().min(1) }).optional(),
        // The status page, status.json and /metrics without a status:read token on a non-loopback listener.
        publicStatus: z.boolean().default(false),
      })
      .prefault({})
      .transform((h) => ({
        ...h,
        issuer: (h.issuer ?? `${h.tls ? 'https' : 'http'}://${h.host}:${h.port}`).replace(/\/$/, ''),
      })),
    ocpp: z
      .strictObject({
        host: z.string().default('127.0.0.1'),
        port: port.default(9000),
        path: z.string().startsWith('/').default('/ocpp'),
        securityProfile: z
          .union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)], { error: '0, 1, 2 or 3' })
          .default(1),
        acceptUnknownStations: z.boolean().default(false),
        heartbeatIntervalS: z.number().int().positive().max(86_400, atMost(86_400)).default(300),
        callTimeoutMs: millis.default(30_000),
        // How soon the daemon notices `station pair|block|remove` run from the CLI.
        changePollMs: millis.default(1000),
        // docs/operating/security.md#security: a larger frame closes the socket (1009) before it is parsed, authenticated or not.
        maxMessageBytes: z
          .number()
          .int()
          .min(1024)
          .max(16 * 1024 * 1024)
          .default(65_536),
        // Malformed frames in a row before the station is disconnected (1002).
        maxBadMessages: z.number().int().positive().max(10_000).default(20),
        // Unknown stations remembered as pending (the least recently seen dropped first; each for 7 days at most).
        maxPendingStations: z.number().int().positive().max(100_000).default(100),
        tls: z.strictObject({ cert: z.string().min(1), key: z.string().min(1) }).optional(),
      })
      .prefault({}),
    company: z.strictObject({ id }).prefault({ id: 'company' }),
    sites: z.array(site).min(1),
    authorization: z
      .strictObject({
        allowConcurrentTx: z.boolean().default(false),
        plugin: z.string().min(1).nullable().default(null),
        // docs/install/connecting-stations.md#connecting-a-station, who may charge: a plugin slower than this counts as passing.
        pluginTimeoutMs: millis.default(2000),
      })
      .prefault({}),
    upstream: upstreamSchema,
    groups: z.array(group).default([]),
    webhookDelivery: z
      .strictObject({
        // The bounds of docs/configuration/index.md#configuration.
        retryIntervalS: retryWaitS.default(10),
        // docs/configuration/webhook-delivery.md#webhook-delivery-installers: the waits after the 1st, 2nd, ... failed attempt, the last repeating;
        // replaces retryIntervalS.
        retryIntervalsS: z.array(retryWaitS).min(1).max(100).optional(),
        maxRetries: z.number().int().nonnegative().max(100_000, atMost(100_000)).default(360),
        queueCapacity: z.number().int().positive().max(1_000_000, atMost(1_000_000)).default(1000),
        requestTimeoutMs: z.number().int().positive().max(300_000, atMost(300_000)).default(10_000),
        // Delivered events are kept this long (for support questions), then pruned; dead letters are kept until
        // replayed.
        retainDeliveredDays: z.number().positive().max(36_500, atMost(36_500)).default(30),
        // docs/partners/signed-meter-values.md#signed-meter-values: which signed readings StopTransaction carries.
        signedMeterValues: z.enum(['beginEnd', 'all', 'none']).default('beginEnd'),
      })
      .prefault({}),
    store: z
      .strictObject({
        // Stopped transactions are kept this long (history, reconciliation), then pruned; open ones are always kept.
        retainStoppedTransactionsDays: z.number().positive().max(36_500, atMost(36_500)).default(400),
      })
      .prefault({}),
    loadManagement: z
      .strictObject({
        // IEC 61851: below 6 A a car may not charge at all; its PWM signal ends at 80 A.
        minCurrentA: z.number().positive().max(80, atMost(80)).default(6),
        raiseAfterS: z.number().positive().max(3600, atMost(3600)).default(5),
        profileValidityS: z.number().positive().max(86_400, atMost(86_400)).default(300),
      })
      .prefault({}),
    // docs/operating/firmware-and-logs.md: images served to the stations and rollouts (contract 11.2).
    firmware: z
      .strictObject({
        // Where stations reach the gateway's HTTP listener when that is not http.issuer (e.g. behind NAT, or
        // http.host on loopback); firmware downloads and HTTP log uploads are offered under it.
        baseUrl: z
          .url({ protocol: /^https?$/ })
          .transform((u) => u.replace(/\/$/, ''))
          .optional(),
        maxImageBytes: z
          .number()
          .int()
          .positive()
          .max(16 * GIB, atMost(16 * GIB))
          .default(GIB),
        maxTotalBytes: z
          .number()
          .int()
          .positive()
          .max(64 * GIB, atMost(64 * GIB))
          .default(2 * GIB),
        // No progress from a station for this long after its UpdateFirmware fails that station.
        stationTimeoutS: z.number().int().positive().max(604_800, atMost(604_800)).default(3600),
      })
      .prefault({})
      .refine((f) => f.maxImageBytes <= f.maxTotalBytes, {
        path: ['maxImageBytes'],
        message: 'at most firmware.maxTotalBytes',
      }),
    // docs/operating/firmware-and-logs.md: station logs uploaded to the gateway (contract 11.3).
    logs: z
      .strictObject({
        // FTP upload locations, off unless configured: most 1.6 stations upload diagnostics only over FTP.
        ftp: z
          .strictObject({
            host: z.string().default('0.0.0.0'),
            port: port.default(2121),
            // The IPv4 address passive data connections are announced under; default: the host of
            // firmware.baseUrl, else http.issuer (resolved at start).
            passiveHost: z.ipv4().optional(),
            // Passive data connections use a port in this range (inclusive).
            passivePorts: z.tuple([port, port]).refine(([from, to]) => from > 0 && from <= to, {
              message: '[from, to] with 0 < from <= to',
            }),
          })
          .optional(),
        // An upload location (HTTP token, FTP user) is valid this long; a station silent this long fails.
        uploadWindowS: z.number().int().positive().max(86_400, atMost(86_400)).default(3600),
        maxUploadBytes: z
          .number()
          .int()
          .positive()
          .max(4 * GIB, atMost(4 * GIB))
          .default(64 * MIB),
        maxTotalBytes: z
          .number()
          .int()
          .positive()
          .max(64 * GIB, atMost(64 * GIB))
          .default(512 * MIB),
        retainDays: z.number().positive().max(36_500, atMost(36_500)).default(30),
      })
      .prefault({})
      .refine((l) => l.maxUploadBytes <= l.maxTotalBytes, {
        path: ['maxUploadBytes'],
        message: 'at most logs.maxTotalBytes',
      }),
    keystore: z
      .strictObject({
        passphraseEnv: z.string().min(1).default('CHARGEGATE_KEYSTORE_PASSPHRASE'),
        retiredKeyGraceS: z.number().int().min(0).default(86_400),
        // systemd credential (file under $CREDENTIALS_DIRECTORY) used when passphraseEnv is unset.
        passphraseCredential: z
          .string()
          .min(1)
          .regex(/^[^/]+$/, 'a file name, no directory')
          .default('keystore-passphrase'),
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
      uniqueIds(s.chargePoints, ['sites', si, 'chargePoints'], ctx);
      s.stations.forEach((st, sti) => {
        if (stationIds.has(st.id))
          ctx.addIssue({
            code: 'custom',
            path: ['sites', si, 'stations', sti, 'id'],
            message: `duplicate station id "${st.id}"`,
          });
        stationIds.set(st.id, s.id);
        const connectors = new Set<number>();
        st.chargePoints.forEach((cp, cpi) => {
          if (chargePointIds.has(cp.id))
            ctx.addIssue({
              code: 'custom',
              path: ['sites', si, 'stations', sti, 'chargePoints', cpi, 'id'],
              message: `duplicate charge point id "${cp.id}"`,
            });
          chargePointIds.add(cp.id);
          for (const n of cp.connectors) {
            if (connectors.has(n))
              ctx.addIssue({
                code: 'custom',
                path: ['sites', si, 'stations', sti, 'chargePoints', cpi, 'connectors'],
                message: `connector ${n} belongs to two charge points`,
              });
            connectors.add(n);
          }
        });
      });
      s.meters.forEach((m, mi) => {
        if (m.role === 'circuit') return;
        if (chargePointIds.has(m.chargePointId))
          ctx.addIssue({
            code: 'custom',
            path: ['sites', si, 'meters', mi, 'chargePointId'],
            message: `charge point "${m.chargePointId}" is already used`,
          });
        chargePointIds.add(m.chargePointId);
      });
    });
    meterConflicts(c.sites, stationIds, ctx);
    circuitProblems(c.sites, c.loadManagement.minCurrentA, ctx);
    if (c.ocpp.securityProfile >= 2 && !c.ocpp.tls)
      ctx.addIssue({
        code: 'custom',
        path: ['ocpp', 'tls'],
        message: `required when securityProfile is ${c.ocpp.securityProfile} ({ cert, key })`,
      });
    // Profile 0 lets anyone who reaches the port act as a station: only acceptable when nobody else can reach it.
    if (c.ocpp.securityProfile === 0 && !isLoopbackHost(c.ocpp.host)) {
      ctx.addIssue({
        code: 'custom',
        path: ['ocpp', 'securityProfile'],
        message: `0 (no station authentication) is only allowed when ocpp.host is loopback, not "${c.ocpp.host}"; use 1 or 2`,
      });
    }
    upstreamProblems(c.upstream, c.ocpp.maxMessageBytes, ctx);
    c.groups.forEach((g, gi) => {
      const [level, target] = g.scope.split(/:(.*)/s) as [string, string];
      const known =
        (level === 'company' && target === c.company.id) ||
        (level === 'site' && c.sites.some((s) => s.id === target)) ||
        level === 'station' ||
        level === 'chargePoint';
      if (!known)
        ctx.addIssue({
          code: 'custom',
          path: ['groups', gi, 'scope'],
          message: `no ${level} "${target}" in this config`,
        });
    });
  })
  .transform((c) => ({ ...c, sites: c.sites.map((s) => ({ ...s, circuits: withInheritedFailsafe(s.circuits) })) }));
function uniqueIds(items: ReadonlyArray<{ id: string }>, path: (string | number)[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(item.id))
      ctx.addIssue({ code: 'custom', path: [...path, i, 'id'], message: `duplicate id "${item.id}"` });
    seen.add(item.id);
  });
}

export type Config = z.output<typeof configSchema>;
export type SiteConfig = Config['sites'][number];
export type StationConfig = SiteConfig['stations'][number];
export type MeterConfig = SiteConfig['meters'][number];
export type SessionMeterConfig = Extract<MeterConfig, { role: 'session' }>;
export type CircuitMeterConfig = Extract<MeterConfig, { role: 'circuit' }>;
export type ChargePointFactsConfig = SiteConfig['chargePoints'][number];
export type CircuitConfig = SiteConfig['circuits'][number];
export type LoadManagementConfig = Config['loadManagement'];
export type FirmwareConfig = Config['firmware'];
export type LogsConfig = Config['logs'];
export type WebhookConfig = SiteConfig['webhooks'][number];
export type WebhookAuthConfig = WebhookConfig['auth'];
export type GroupConfig = Config['groups'][number];
export type ModbusConnectionConfig = MeterConfig['connection'];
export type Permission = (typeof PERMISSIONS)[number];

/** The meters of a site that stand for a charge point and detect its sessions (not the circuit meters). */
export function sessionMeters(site: SiteConfig): SessionMeterConfig[] {
  return site.meters.filter((m) => m.role === 'session');
}
