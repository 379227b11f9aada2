/**
 * The status page's script, served as /status.js: polls status.json and renders with textContent only, since
 * station ids come from whoever connects, so nothing it shows is ever parsed as HTML.
 *
 * Classic scripts, not modules (no import or export): status-data.ts, status-charts.ts and this file, which tsc joins
 * in that order into one status.js (outFile in tsconfig.json), with no loader or bundler, and `<script
 * src="status.js" defer>` runs it. Their top-level names are globals of a page that has no other script; tsc refuses
 * one that a DOM global already holds. They are compiled alone, without the daemon's modules (an import would make
 * them modules and pull those in), so the parts of status.json they read are declared in status-data.ts, after
 * ../status-snapshot.ts; test/status-page renders a real one in Chromium.
 */

const REFRESH_MS = 2000;

type Content = Node | string | number | null | undefined;

interface Row {
  cells: Content[];
  data: Record<string, string>;
}

let lastUpdate: number | null = null;

function el(tag: string, className: string, children: Content[] = []): HTMLElement {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const child of children)
    node.append(
      child instanceof Node
        ? child
        : document.createTextNode(child === null || child === undefined ? '' : String(child)),
    );
  return node;
}

function byId(id: string): HTMLElement {
  const node = document.getElementById(id);
  if (!node) throw new Error(`#${id} is missing from the page`);
  return node;
}

// What an installer reads: OCPP and internal values in plain words. The raw value stays the chip's class and the
// rows' data attributes (status.json keeps the raw values too). A Map, so no value ever finds an Object method.
const LABELS = new Map(
  Object.entries({
    ok: 'OK',
    warning: 'Warning',
    critical: 'Needs attention',
    online: 'Online',
    offline: 'Offline',
    paired: 'Paired',
    pending: 'Waiting for pairing',
    blocked: 'Blocked',
    removed: 'Removed',
    configured: 'Configured',
    Available: 'Available',
    Preparing: 'Plugged in',
    Charging: 'Charging',
    SuspendedEV: 'Paused by the vehicle',
    SuspendedEVSE: 'Paused by the charger',
    Finishing: 'Finishing',
    Reserved: 'Reserved',
    Unavailable: 'Unavailable',
    Faulted: 'Fault',
    NoError: '',
    idle: 'No session',
    starting: 'Session starting',
    stopping: 'Session ending',
    ocpp: 'OCPP',
    modbus: 'Modbus meter',
    sharing: 'Sharing',
    waiting: 'Waiting for its turn',
    failsafe: 'Fail-safe',
    uncontrolled: 'Uncontrolled',
  }),
);

// Column and fact names of the health reports; a field not listed is shown by its own name in words.
const HEADINGS = new Map(
  Object.entries({
    siteId: 'Site',
    webhookId: 'Webhook',
    eventType: 'Event',
    active: 'Enabled',
    queueSize: 'Waiting',
    queueCapacity: 'Capacity',
    lastDequeueAt: 'Last taken',
    lastRequestAt: 'Last request',
    lastRequestDurationMs: 'Took (ms)',
    lastStatus: 'Last HTTP status',
    lastError: 'Last error',
    consecutiveFailures: 'Failures in a row',
    deadLetters: 'Dead letters',
    status: 'Health',
    reasons: 'Why',
    deliveryThread: 'Delivery thread',
    threadRestarts: 'Thread restarts',
    lastThreadExitAt: 'Thread last ended',
    connectedStations: 'Stations connected',
    port: 'Port',
    lastFailureAt: 'Last failed commit',
    error: 'Error',
    stationId: 'Station',
    queued: 'Queued messages',
    oldestQueuedAt: 'Oldest queued',
    dropped: 'Dropped',
    level: 'Health',
    url: 'Address',
    listener: 'Listener',
    file: 'File',
    notAfter: 'Valid until',
    daysLeft: 'Days left',
    circuitsWithoutMeter: 'Circuits without their meter',
  }),
);

const PART_TITLES = new Map(
  Object.entries({
    ocpp: 'OCPP central system',
    webhooks: 'Webhook delivery',
    meters: 'Modbus meters',
    storage: 'Storage',
    certificates: 'TLS certificates',
    load: 'Load management',
    upstream: 'Uplink to the CSMS',
    signedMeterValues: 'Signed meter values',
  }),
);

// An uplink's state (docs/design/uplink.md#uplink-what-the-csms-sees): its `pending` is the CSMS's answer, not a station waiting to be paired.
const LINK_STATES = new Map(
  Object.entries({
    connecting: ['Connecting', 'offline'],
    booting: ['Introducing the station', 'pending'],
    pending: ['CSMS answered Pending', 'pending'],
    rejected: ['CSMS answered Rejected', 'critical'],
    accepted: ['Accepted', 'online'],
    closed: ['Closed', 'offline'],
  }),
);

// Health reports differ per part: any field is shown by its name; times (…At) as an age, lists joined.
function words(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
}

function heading(key: string): string {
  const known = HEADINGS.get(key);
  if (known !== undefined) return known;
  const text = words(key);
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function label(value: unknown): string {
  if (value === null || value === undefined) return '';
  return LABELS.get(String(value)) ?? words(String(value));
}

/** A value as a coloured chip: its class is `level`, or the value itself (a status, a health level). */
function chip(value: string, level?: string): HTMLElement {
  return el('span', 'chip ' + (level || value), [label(value)]);
}

function ago(iso: string | null): string {
  if (!iso) return '';
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 60) return s + ' s ago';
  if (s < 3600) return Math.round(s / 60) + ' min ago';
  if (s < 86400) return Math.round(s / 3600) + ' h ago';
  return new Date(iso).toLocaleString();
}

function time(iso: string | null): Content {
  return iso ? el('time', '', [ago(iso)]) : '';
}

/** `Reset by cli, 3 s ago`: what the station is being asked now, by whom, since when. */
function operationInProgress(operation: { action: string; who: string; since: string }): HTMLElement {
  return el('span', 'operation', [operation.action + ' by ' + operation.who + ', ', time(operation.since)]);
}

function table(headers: string[], rows: Row[], empty: string): HTMLElement {
  if (rows.length === 0) return el('p', 'empty', [empty]);
  const head = el(
    'tr',
    '',
    headers.map((h) => el('th', '', [h])),
  );
  const body = rows.map((row) => {
    const tr = el(
      'tr',
      '',
      row.cells.map((cell) => el('td', '', [cell])),
    );
    Object.assign(tr.dataset, row.data);
    return tr;
  });
  return el('table', '', [el('thead', '', [head]), el('tbody', '', body)]);
}

// A wide table scrolls inside its own box: on a phone the page itself never scrolls sideways.
function fill(sectionId: string, content: HTMLElement): void {
  const section = document.querySelector(`#${sectionId} .content`);
  if (!section) throw new Error(`#${sectionId} .content is missing from the page`);
  section.replaceChildren(content.tagName === 'TABLE' ? el('div', 'scroll', [content]) : content);
}

function scalar(value: unknown): value is string | number | boolean | null | undefined {
  return value === null || value === undefined || ['string', 'number', 'boolean'].includes(typeof value);
}

function shown(value: unknown): boolean {
  return scalar(value) || (Array.isArray(value) && value.every(scalar));
}

function cell(key: string, value: unknown, part: string): Content {
  if (key === 'status' || key === 'level') return chip(String(value));
  const linkState = part === 'upstream' && key === 'state' ? LINK_STATES.get(String(value)) : undefined;
  if (linkState) return el('span', 'chip ' + linkState[1], [linkState[0]]);
  if (key === 'notAfter' && typeof value === 'string') return new Date(value).toLocaleDateString();
  if (/At$/.test(key) && typeof value === 'string') return time(value);
  if (Array.isArray(value)) return value.join('; ');
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return value === null || value === undefined ? '' : String(value);
}

function factText(key: string, value: unknown): string {
  if (/At$/.test(key) && typeof value === 'string') return ago(value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.join(', ');
  return typeof value === 'string' ? label(value) : String(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}

function renderParts(parts: StatusSnapshot['parts']): HTMLElement {
  const blocks = Object.entries(parts).map(([name, report]) => {
    const facts = Object.keys(report).filter((k) => k !== 'status' && shown(report[k]));
    const block = el('div', 'part', [
      el('h3', '', [(PART_TITLES.get(name) ?? name) + ' ', chip(String(report.status))]),
      el('p', 'muted', [facts.map((k) => heading(k) + ': ' + factText(k, report[k])).join(' · ')]),
    ]);
    for (const list of Object.values(report)) {
      if (!Array.isArray(list) || !isRecord(list[0])) continue;
      const first = list[0];
      const columns = Object.keys(first).filter((c) => shown(first[c]));
      const rows = list.map((item: Record<string, unknown>) => ({
        cells: columns.map((c) => cell(c, item[c], name)),
        data: { part: name },
      }));
      block.append(el('div', 'scroll', [table(columns.map(heading), rows, '')]));
    }
    return block;
  });
  return blocks.length ? el('div', '', blocks) : el('p', 'empty', ['no parts report health']);
}

function pendingState(stationId: string, sites: string[]): HTMLElement {
  const command = 'chargegate station pair ' + stationId + (sites.length > 1 ? ' --site <site>' : '');
  return el('span', '', [chip('pending'), ' ', el('code', '', [command])]);
}

function round(n: number | null, digits: number): string {
  return n === null ? '' : String(Math.round(n * Math.pow(10, digits)) / Math.pow(10, digits));
}

function meterRow(m: MeterStatus, chargePoints: ChargePointView[]): Row {
  const connector = chargePoints
    .find((c) => c.chargePointId === m.chargePointId)
    ?.connectors.find((c) => c.connectorId === m.connectorId);
  const live = m.live;
  // An offline meter's figures are its last good reading: shown, but marked as old.
  const reading = (text: string): Content =>
    live && !live.online && text !== '' ? el('span', 'stale', [text + ' (stale)']) : text;
  return {
    cells: [
      m.meterId,
      m.chargePointId + '/' + m.connectorId,
      m.model,
      m.address,
      live
        ? chip(live.online ? live.status : 'offline', live.online ? live.status : 'critical')
        : chip('not polled', 'state'),
      reading(live ? round(live.energyKWh, 3) : ''),
      reading(live ? live.currentA.map((a) => round(a, 1)).join(' / ') : ''),
      reading(live ? round(live.powerW, 0) : ''),
      live
        ? label(live.session) + (live.transactionId === null ? '' : ' (transaction ' + live.transactionId + ')')
        : '',
      live ? time(live.lastGoodReadingAt) : '',
      connector ? chip(connector.status) : '',
    ],
    data: { meter: m.meterId, session: live ? live.session : '' },
  };
}

function render(s: StatusSnapshot): void {
  byId('company').textContent = s.company + ' · ' + s.sites.join(', ');
  const health = byId('health');
  health.textContent = label(s.health);
  health.className = 'badge ' + s.health;
  byId('about').textContent = 'version ' + s.version + ' · running since ' + new Date(s.startedAt).toLocaleString();

  const stations = s.stations.map((st) => ({
    cells: [
      st.stationId,
      st.siteId || '',
      st.state === 'pending' ? pendingState(st.stationId, s.sites) : chip(st.state, 'state'),
      chip(st.online ? 'online' : 'offline'),
      time(st.lastSeen),
      [st.vendor, st.model].filter(Boolean).join(' / '),
      st.firmwareVersion || '',
      st.operation
        ? operationInProgress(st.operation)
        : st.longOperation
          ? el('span', 'operation', [st.longOperation.kind + ' ' + st.longOperation.state])
          : '',
    ],
    data: { station: st.stationId, online: String(st.online) },
  }));
  fill(
    'stations',
    table(
      ['Station', 'Site', 'State', 'Connection', 'Last seen', 'Vendor / model', 'Firmware', 'Operation'],
      stations,
      'no station has connected or been configured',
    ),
  );

  const connectors = s.chargePoints.flatMap((cp) =>
    cp.connectors.map((c) => ({
      cells: [
        cp.chargePointId,
        cp.stationId,
        cp.siteId,
        String(c.connectorId),
        chip(c.status),
        label(c.errorCode),
        c.transactionId === undefined ? '' : String(c.transactionId),
      ],
      data: { connector: cp.chargePointId + '/' + c.connectorId, status: c.status },
    })),
  );
  fill(
    'charge-points',
    table(
      ['Charge point', 'Station', 'Site', 'Connector', 'Status', 'Error code', 'Transaction'],
      connectors,
      'no charge points',
    ),
  );

  remember(s.load, Date.parse(s.generatedAt));
  fill('circuits', renderLoad(s.load));

  const transactions = s.openTransactions.map((t) => ({
    cells: [
      String(t.transactionId),
      t.chargePointId,
      String(t.connectorId),
      t.stationId,
      time(t.startedAt),
      String(t.meterStartKWh),
      label(t.source),
    ],
    data: { transaction: String(t.transactionId) },
  }));
  fill(
    'transactions',
    table(
      ['Transaction', 'Charge point', 'Connector', 'Station', 'Started', 'Meter start (kWh)', 'Source'],
      transactions,
      'no transaction in progress',
    ),
  );

  const meters = s.meters.map((m) => meterRow(m, s.chargePoints));
  const meterHeaders = [
    'Meter',
    'Charge point',
    'Model',
    'Address',
    'Health',
    'Energy (kWh)',
    'Current (A)',
    'Power (W)',
    'Session',
    'Last reading',
    'Connector',
  ];
  fill('meters', table(meterHeaders, meters, 'no Modbus meter configured'));

  fill('parts', renderParts(s.parts));
  lastUpdate = Date.now();
  showFreshness(true);
}

function showFreshness(ok: boolean): void {
  const node = byId('freshness');
  node.className = ok ? 'muted' : 'stale';
  node.textContent =
    (ok ? 'live, updated ' : 'cannot reach chargegate; last update ') +
    (lastUpdate ? new Date(lastUpdate).toLocaleTimeString() : 'never');
}

async function refresh(): Promise<void> {
  try {
    const response = await fetch('status.json', { cache: 'no-store' });
    if (!response.ok) throw new Error('HTTP ' + response.status);
    render((await response.json()) as StatusSnapshot);
  } catch {
    showFreshness(false);
  } finally {
    setTimeout(() => void refresh(), REFRESH_MS);
  }
}

void refresh();
