/**
 * The status page as three static assets: plain HTML, CSS and browser JavaScript, kept as strings so the daemon
 * serves them from dist/ with no build step or bundler. The script polls status.json and renders with
 * textContent only: station ids come from whoever connects, so nothing it shows is ever parsed as HTML.
 */

const STATUS_PAGE_REFRESH_MS = 2000;

export const STATUS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chargegate status</title>
<link rel="stylesheet" href="status.css">
<script src="status.js" defer></script>
</head>
<body>
<header>
  <h1>chargegate <span id="company"></span></h1>
  <p><span id="health" class="badge">…</span> <span id="freshness">loading…</span></p>
  <p class="muted" id="about"></p>
</header>
<noscript><p class="bad">This page refreshes itself with JavaScript; <a href="status.json">status.json</a> has the same data.</p></noscript>
<main>
  <section id="stations"><h2>Stations</h2><div class="content"></div></section>
  <section id="charge-points"><h2>Charge points</h2><div class="content"></div></section>
  <section id="transactions"><h2>Open transactions</h2><div class="content"></div></section>
  <section id="meters"><h2>Meters</h2><div class="content"></div></section>
  <section id="parts"><h2>Health</h2><div class="content"></div></section>
</main>
</body>
</html>
`;

export const STATUS_CSS = `:root { font-family: system-ui, sans-serif; color: #1d232a; background: #f5f7f9; }
body { margin: 0 auto; max-width: 72rem; padding: 1rem; }
h1 { margin: 0 0 .25rem; font-size: 1.4rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .25rem; }
p { margin: .25rem 0; }
.muted { color: #5b6670; font-size: .9rem; }
table { border-collapse: collapse; width: 100%; background: #fff; font-size: .9rem; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #e2e6ea; vertical-align: top; }
th { background: #eef1f4; font-weight: 600; }
.empty { color: #5b6670; font-style: italic; }
.badge, .chip { display: inline-block; border-radius: .8rem; padding: .05rem .6rem; font-size: .85rem; background: #e2e6ea; }
.ok, .Available, .online { background: #d3f2dc; color: #12512a; }
.warning, .Preparing, .Finishing, .SuspendedEV, .SuspendedEVSE, .Reserved, .pending { background: #fdefc8; color: #6a4a00; }
.critical, .Faulted, .Unavailable, .offline, .bad { background: #fbd5d5; color: #7a1212; }
.Charging { background: #cfe3ff; color: #0d3a78; }
.stale { color: #7a1212; }
.chip + .chip { margin-left: .3rem; }
.scroll { overflow-x: auto; }
`;

export const STATUS_SCRIPT = `'use strict';
(function () {
  var REFRESH_MS = ${STATUS_PAGE_REFRESH_MS};
  var lastUpdate = null;

  function el(tag, className, children) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    (children || []).forEach(function (child) {
      node.append(child instanceof Node ? child : document.createTextNode(child === null || child === undefined ? '' : String(child)));
    });
    return node;
  }

  // What an installer reads: OCPP and internal values in plain words. The raw value stays the chip's class and the
  // rows' data attributes (status.json keeps the raw values too).
  var LABELS = {
    ok: 'OK', warning: 'Warning', critical: 'Needs attention',
    online: 'Online', offline: 'Offline',
    paired: 'Paired', pending: 'Waiting for pairing', blocked: 'Blocked', removed: 'Removed', configured: 'Configured',
    Available: 'Available', Preparing: 'Plugged in', Charging: 'Charging', SuspendedEV: 'Paused by the vehicle',
    SuspendedEVSE: 'Paused by the charger', Finishing: 'Finishing', Reserved: 'Reserved', Unavailable: 'Unavailable', Faulted: 'Fault',
    NoError: '', idle: 'No session', starting: 'Session starting', stopping: 'Session ending',
    ocpp: 'OCPP', modbus: 'Modbus meter'
  };

  // Column and fact names of the health reports; a field not listed is shown by its own name in words.
  var HEADINGS = {
    siteId: 'Site', webhookId: 'Webhook', eventType: 'Event', active: 'Enabled', queueSize: 'Waiting', queueCapacity: 'Capacity',
    lastDequeueAt: 'Last taken', lastRequestAt: 'Last request', lastRequestDurationMs: 'Took (ms)', lastStatus: 'Last HTTP status',
    lastError: 'Last error', consecutiveFailures: 'Failures in a row', deadLetters: 'Dead letters', status: 'Health', reasons: 'Why',
    deliveryThread: 'Delivery thread', threadRestarts: 'Thread restarts', lastThreadExitAt: 'Thread last ended',
    connectedStations: 'Stations connected', port: 'Port', lastFailureAt: 'Last failed commit', error: 'Error',
    listener: 'Listener', file: 'File', notAfter: 'Valid until', daysLeft: 'Days left'
  };

  function heading(key) {
    if (Object.prototype.hasOwnProperty.call(HEADINGS, key)) return HEADINGS[key];
    var text = words(key);
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  function label(value) {
    if (value === null || value === undefined) return '';
    return Object.prototype.hasOwnProperty.call(LABELS, value) ? LABELS[value] : words(String(value));
  }

  function chip(value, level) {
    return el('span', 'chip ' + (level || value), [label(value)]);
  }

  function ago(iso) {
    if (!iso) return '';
    var s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    if (s < 60) return s + ' s ago';
    if (s < 3600) return Math.round(s / 60) + ' min ago';
    if (s < 86400) return Math.round(s / 3600) + ' h ago';
    return new Date(iso).toLocaleString();
  }

  function time(iso) {
    return iso ? el('time', '', [ago(iso)]) : '';
  }

  function table(headers, rows, empty) {
    if (rows.length === 0) return el('p', 'empty', [empty]);
    var head = el('tr', '', headers.map(function (h) { return el('th', '', [h]); }));
    var body = rows.map(function (row) {
      var tr = el('tr', '', row.cells.map(function (cell) { return el('td', '', [cell]); }));
      Object.keys(row.data || {}).forEach(function (key) { tr.dataset[key] = row.data[key]; });
      return tr;
    });
    return el('table', '', [el('thead', '', [head]), el('tbody', '', body)]);
  }

  // A wide table scrolls inside its own box: on a phone the page itself never scrolls sideways.
  function fill(sectionId, content) {
    document.querySelector('#' + sectionId + ' .content').replaceChildren(content.tagName === 'TABLE' ? el('div', 'scroll', [content]) : content);
  }

  function scalar(value) {
    return value === null || value === undefined || ['string', 'number', 'boolean'].indexOf(typeof value) >= 0;
  }

  function shown(value) {
    return scalar(value) || (Array.isArray(value) && value.every(scalar));
  }

  // Health reports differ per part: any field is shown by its name; times (…At) as an age, lists joined.
  function words(key) {
    return key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  }

  function cell(key, value) {
    if (key === 'status') return chip(String(value), value);
    if (key === 'notAfter' && typeof value === 'string') return new Date(value).toLocaleDateString();
    if (/At$/.test(key) && typeof value === 'string') return time(value);
    if (Array.isArray(value)) return value.join('; ');
    if (typeof value === 'boolean') return value ? 'yes' : 'no';
    return value;
  }

  function factText(key, value) {
    if (/At$/.test(key) && typeof value === 'string') return ago(value);
    if (typeof value === 'boolean') return value ? 'yes' : 'no';
    if (Array.isArray(value)) return value.join(', ');
    return typeof value === 'string' ? label(value) : String(value);
  }

  function renderParts(parts) {
    var titles = { ocpp: 'OCPP central system', webhooks: 'Webhook delivery', meters: 'Modbus meters', storage: 'Storage', certificates: 'TLS certificates' };
    var blocks = Object.keys(parts).map(function (name) {
      var report = parts[name];
      var facts = Object.keys(report).filter(function (k) { return k !== 'status' && shown(report[k]); });
      var block = el('div', 'part', [
        el('h3', '', [(titles[name] || name) + ' ', chip(String(report.status), report.status)]),
        el('p', 'muted', [facts.map(function (k) { return heading(k) + ': ' + factText(k, report[k]); }).join(' · ')]),
      ]);
      Object.keys(report).forEach(function (k) {
        var list = report[k];
        if (!Array.isArray(list) || list.length === 0 || list[0] === null || typeof list[0] !== 'object') return;
        var columns = Object.keys(list[0]).filter(function (c) { return shown(list[0][c]); });
        block.append(el('div', 'scroll', [table(columns.map(heading), list.map(function (item) {
          return { cells: columns.map(function (c) { return cell(c, item[c]); }), data: { part: name } };
        }), '')]));
      });
      return block;
    });
    return blocks.length ? el('div', '', blocks) : el('p', 'empty', ['no parts report health']);
  }

  function render(s) {
    document.getElementById('company').textContent = s.company + ' · ' + s.sites.join(', ');
    var health = document.getElementById('health');
    health.textContent = label(s.health);
    health.className = 'badge ' + s.health;
    document.getElementById('about').textContent = 'version ' + s.version + ' · running since ' + new Date(s.startedAt).toLocaleString();

    fill('stations', table(['Station', 'Site', 'State', 'Connection', 'Last seen', 'Vendor / model', 'Firmware'], s.stations.map(function (st) {
      return {
        cells: [st.stationId, st.siteId || '', st.state === 'pending' ? pendingState(st.stationId, s.sites) : chip(st.state, 'state'), chip(st.online ? 'online' : 'offline'), time(st.lastSeen),
          [st.vendor, st.model].filter(Boolean).join(' / '), st.firmwareVersion || ''],
        data: { station: st.stationId, online: String(st.online) },
      };
    }), 'no station has connected or been configured'));

    function pendingState(stationId, sites) {
      var command = 'chargegate station pair ' + stationId + (sites.length > 1 ? ' --site <site>' : '');
      return el('span', '', [chip('pending'), ' ', el('code', '', [command])]);
    }

    var connectorRows = [];
    s.chargePoints.forEach(function (cp) {
      cp.connectors.forEach(function (c) {
        connectorRows.push({
          cells: [cp.chargePointId, cp.stationId, cp.siteId, String(c.connectorId), chip(c.status), label(c.errorCode), c.transactionId === undefined ? '' : String(c.transactionId)],
          data: { connector: cp.chargePointId + '/' + c.connectorId, status: c.status },
        });
      });
    });
    fill('charge-points', table(['Charge point', 'Station', 'Site', 'Connector', 'Status', 'Error code', 'Transaction'], connectorRows, 'no charge points'));

    fill('transactions', table(['Transaction', 'Charge point', 'Connector', 'Station', 'Started', 'Meter start (kWh)', 'Source'], s.openTransactions.map(function (t) {
      return { cells: [String(t.transactionId), t.chargePointId, String(t.connectorId), t.stationId, time(t.startedAt), String(t.meterStartKWh), label(t.source)], data: { transaction: String(t.transactionId) } };
    }), 'no transaction in progress'));

    fill('meters', table(['Meter', 'Charge point', 'Model', 'Address', 'Health', 'Energy (kWh)', 'Current (A)', 'Power (W)', 'Session', 'Last reading', 'Connector'], s.meters.map(function (m) {
      var cp = s.chargePoints.find(function (c) { return c.chargePointId === m.chargePointId; });
      var connector = cp && cp.connectors.find(function (c) { return c.connectorId === m.connectorId; });
      var live = m.live;
      var round = function (n, digits) { return n === null ? '' : String(Math.round(n * Math.pow(10, digits)) / Math.pow(10, digits)); };
      // An offline meter's figures are its last good reading: shown, but marked as old.
      var reading = function (text) { return live && !live.online && text !== '' ? el('span', 'stale', [text + ' (stale)']) : text; };
      return {
        cells: [m.meterId, m.chargePointId + '/' + m.connectorId, m.model, m.address,
          live ? chip(live.online ? live.status : 'offline', live.online ? live.status : 'critical') : chip('not polled', 'state'),
          reading(live ? round(live.energyKWh, 3) : ''), reading(live ? live.currentA.map(function (a) { return round(a, 1); }).join(' / ') : ''), reading(live ? round(live.powerW, 0) : ''),
          live ? label(live.session) + (live.transactionId === null ? '' : ' (transaction ' + live.transactionId + ')') : '', live ? time(live.lastGoodReadingAt) : '',
          connector ? chip(connector.status) : ''],
        data: { meter: m.meterId, session: live ? live.session : '' },
      };
    }), 'no Modbus meter configured'));

    fill('parts', renderParts(s.parts));
    lastUpdate = Date.now();
    showFreshness(true);
  }

  function showFreshness(ok) {
    var node = document.getElementById('freshness');
    node.className = ok ? 'muted' : 'stale';
    node.textContent = (ok ? 'live, updated ' : 'cannot reach chargegate; last update ') + (lastUpdate ? new Date(lastUpdate).toLocaleTimeString() : 'never');
  }

  function refresh() {
    fetch('status.json', { cache: 'no-store' })
      .then(function (response) {
        if (!response.ok) throw new Error('HTTP ' + response.status);
        return response.json();
      })
      .then(render)
      .catch(function () { showFreshness(false); })
      .finally(function () { setTimeout(refresh, REFRESH_MS); });
  }

  refresh();
})();
`;
