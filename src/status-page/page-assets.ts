import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ChargegateError } from '../errors/index.js';

/**
 * The status page as three static assets: plain HTML and CSS kept as strings, and the script, which tsc compiles
 * from browser/status.ts (typed against the DOM) into dist/.
 */

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
  <section id="circuits"><h2>Circuits</h2><div class="content"></div></section>
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
.sharing { background: #d3f2dc; color: #12512a; }
.waiting, .failsafe { background: #fdefc8; color: #6a4a00; }
.uncontrolled { background: #fbd5d5; color: #7a1212; }
.circuit { margin-bottom: 1rem; }
.chart { display: block; width: 100%; height: 8rem; background: #fff; border: 1px solid #e2e6ea; }
.chart path { fill: none; stroke-width: 2; vector-effect: non-scaling-stroke; stroke-linejoin: round; }
.chart .limit, .key.limit::before { stroke: #7a1212; stroke-dasharray: 6 4; border-top-color: #7a1212; border-top-style: dashed; }
.chart .L1, .key.L1::before { stroke: #0d3a78; border-top-color: #0d3a78; }
.chart .L2, .key.L2::before { stroke: #b35c00; border-top-color: #b35c00; }
.chart .L3, .key.L3::before { stroke: #3b7a2a; border-top-color: #3b7a2a; }
.key { margin-right: .6rem; white-space: nowrap; }
.key::before { content: ''; display: inline-block; width: 1.2rem; margin-right: .25rem; vertical-align: middle; border-top: 2px solid; }
`;

/** Where npm run build puts the compiled browser/status.ts: dist/ beside src/, both in a checkout and in an install. */
const STATUS_SCRIPT_FILE = fileURLToPath(new URL('../../dist/status-page/browser/status.js', import.meta.url));

/** The status page script is not where the build puts it: a checkout not built, or an install missing files. */
export class StatusScriptMissingError extends ChargegateError {
  override name = 'StatusScriptMissingError';
  readonly code = 'CHARGEGATE_STATUS_SCRIPT_MISSING';
}

/** Read once at start, so a missing script stops the start with what to do, instead of a 500 for every browser. */
export function readStatusScript(file = STATUS_SCRIPT_FILE): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new StatusScriptMissingError(
      `cannot read the status page script ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}: run npm run build, or install again`,
      {
        cause: err,
      },
    );
  }
}
