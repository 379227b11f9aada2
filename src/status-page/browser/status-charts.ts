/* exported remember, renderLoad */
// The circuit charts: what each circuit carried over the last minutes, kept in this page only (status.json has the
// present), drawn as SVG by hand, styled by status.css (the page's policy allows no inline style).
const SVG_NS = 'http://www.w3.org/2000/svg';
const CHART_WINDOW_MS = 5 * 60_000;
const CHART_WIDTH = 600;
const CHART_HEIGHT = 120;

interface Sample {
  at: number;
  /** Null while the circuit's meter is lost: a gap in the lines. */
  phasesA: PhaseCurrents | null;
  limitA: number;
}

const circuitHistory = new Map<string, Sample[]>();

/** A metered circuit's measured phases; without a meter what must fit its limit: other load plus what is allowed. */
function plotted(c: CircuitStatus): PhaseCurrents | null {
  if (c.meter === 'none')
    return { L1: c.otherA.L1 + c.allowedA.L1, L2: c.otherA.L2 + c.allowedA.L2, L3: c.otherA.L3 + c.allowedA.L3 };
  return c.meter === 'ok' && c.measuredA ? c.measuredA : null;
}

function remember(load: LoadStatus | null, at: number): void {
  const circuits = load ? load.circuits : [];
  for (const id of [...circuitHistory.keys()]) if (!circuits.some((c) => c.circuitId === id)) circuitHistory.delete(id);
  for (const c of circuits) {
    const samples = (circuitHistory.get(c.circuitId) ?? []).filter((x) => x.at > at - CHART_WINDOW_MS && x.at < at);
    samples.push({ at, phasesA: plotted(c), limitA: c.maxCurrentA });
    circuitHistory.set(c.circuitId, samples);
  }
}

function svg(tag: string, attributes: Record<string, string>, children: Node[] = []): SVGElement {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/** A path through the samples' values; a sample without one starts a new stretch. */
function line(
  samples: Sample[],
  value: (x: Sample) => number | null,
  x: (at: number) => number,
  y: (a: number) => number,
): string {
  let d = '';
  let drawing = false;
  for (const sample of samples) {
    const a = value(sample);
    if (a === null) {
      drawing = false;
      continue;
    }
    d += (drawing ? ' L' : d ? ' M' : 'M') + x(sample.at).toFixed(1) + ' ' + y(a).toFixed(1);
    drawing = true;
  }
  return d;
}

function chart(c: CircuitStatus): SVGElement {
  const samples = circuitHistory.get(c.circuitId) ?? [];
  const latest = samples.length ? samples[samples.length - 1]!.at : 0;
  const peak = Math.max(
    1,
    ...samples.map((x) => Math.max(x.limitA, ...(x.phasesA ? PHASES.map((p) => x.phasesA![p]) : [0]))),
  );
  // Headroom above the highest line, in whole 5 A steps so the scale does not twitch with every reading.
  const scaleA = Math.ceil((peak * 1.1) / 5) * 5;
  const x = (at: number) => ((at - (latest - CHART_WINDOW_MS)) / CHART_WINDOW_MS) * CHART_WIDTH;
  const y = (a: number) => CHART_HEIGHT - (Math.max(0, a) / scaleA) * CHART_HEIGHT;
  const what = c.meter === 'none' ? 'other load plus what chargegate allows (no meter)' : 'measured';
  const title = svg('title', {});
  title.textContent = c.circuitId + ': ' + what + ' per phase against its limit, last 5 minutes, 0 to ' + scaleA + ' A';
  const phaseLines = PHASES.map((p) => {
    const current = samples.length ? samples[samples.length - 1]!.phasesA : null;
    return svg('path', {
      class: 'phase ' + p,
      'data-phase': p,
      'data-latest': current ? String(current[p]) : '',
      d: line(samples, (s) => (s.phasesA ? s.phasesA[p] : null), x, y),
    });
  });
  return svg(
    'svg',
    {
      class: 'chart',
      viewBox: '0 0 ' + CHART_WIDTH + ' ' + CHART_HEIGHT,
      preserveAspectRatio: 'none',
      role: 'img',
      'data-circuit': c.circuitId,
      'data-scale-a': String(scaleA),
    },
    [title, svg('path', { class: 'limit', d: line(samples, (s) => s.limitA, x, y) }), ...phaseLines],
  );
}

function amperes(a: number | undefined): string {
  return a === undefined ? '' : a.toFixed(1);
}

function meterChip(c: CircuitStatus): HTMLElement {
  if (c.meterId === undefined) return el('span', 'chip', ['no meter']);
  return c.meter === 'ok'
    ? el('span', 'chip ok', ['meter ' + c.meterId])
    : el('span', 'chip critical', ['meter ' + c.meterId + ' lost: fail-safe']);
}

function circuitBlock(c: CircuitStatus): HTMLElement {
  const now = plotted(c);
  const top = now ? PHASES.reduce((a, b) => (now[b] > now[a] ? b : a)) : null;
  const facts = [
    'site ' + c.siteId,
    ...(c.parent ? ['part of ' + c.parent] : []),
    'limit ' + amperes(c.maxCurrentA) + ' A per phase',
    'headroom ' + amperes(c.headroomA) + ' A',
    ...(now && top ? ['most loaded: ' + top + ' ' + amperes(now[top]) + ' A'] : []),
  ];
  const phases = PHASES.map((p) => ({
    cells: [p, c.measuredA ? amperes(c.measuredA[p]) : '', amperes(c.otherA[p]), amperes(c.allowedA[p])],
    data: { phase: p },
  }));
  const drawn = chart(c);
  const legend = el('p', 'legend muted', [
    ...PHASES.map((p) => el('span', 'key ' + p, [p])),
    el('span', 'key limit', ['limit']),
    c.meter === 'none' ? 'other load + allowed (no meter)' : 'measured',
    ', last 5 minutes, 0 to ' + drawn.getAttribute('data-scale-a') + ' A',
  ]);
  const block = el('div', 'circuit', [
    el('h3', '', [c.circuitId + ' ', meterChip(c)]),
    el('p', 'muted', [facts.join(' · ')]),
    drawn,
    legend,
    el('div', 'scroll', [table(['Phase', 'Measured (A)', 'Other load (A)', 'Allowed (A)'], phases, '')]),
  ]);
  block.dataset.circuit = c.circuitId;
  return block;
}

function renderLoad(load: LoadStatus | null): HTMLElement {
  if (!load) return el('p', 'empty', ['no circuits configured: load management is off']);
  const connectors = load.connectors.map((k) => ({
    cells: [
      k.chargePointId + '/' + k.connectorId,
      k.stationId || label('modbus'),
      k.circuitId,
      chip(k.state),
      amperes(k.allowedA),
      amperes(k.drawnA),
      k.transactionId === undefined ? '' : String(k.transactionId),
    ],
    data: { connector: k.chargePointId + '/' + k.connectorId, state: k.state },
  }));
  return el('div', '', [
    ...load.circuits.map(circuitBlock),
    el('h3', '', ['Managed connectors']),
    el('div', 'scroll', [
      table(
        ['Connector', 'Station', 'Circuit', 'State', 'Allowed (A)', 'Drawn (A)', 'Transaction'],
        connectors,
        'no charge point on the circuits',
      ),
    ]),
  ]);
}
