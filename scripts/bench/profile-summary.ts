import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

/**
 * `npx tsx scripts/bench/profile-summary.ts FILE.cpuprofile [--top N] [--from S] [--to S]`: where a process spent
 * its CPU, by package or source folder and by function (self time), optionally only between two instants
 * (seconds since the profile started) — a scenario's load phase rather than the whole life of the daemon.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, from: { type: 'string' }, to: { type: 'string' } },
});
const file = positionals[0];
if (!file) {
  process.stderr.write('usage: profile-summary FILE.cpuprofile [--top N] [--from S] [--to S]\n');
  process.exit(2);
}
const top = Number(values.top);
const fromUs = values.from === undefined ? 0 : Number(values.from) * 1e6;
const toUs = values.to === undefined ? Number.POSITIVE_INFINITY : Number(values.to) * 1e6;
const profile = JSON.parse(readFileSync(file, 'utf8')) as {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
};

// Each sample's delta belongs to the node it hit; the running sum of deltas is the sample's time.
const selfUs = new Map<number, number>();
let atUs = 0;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  atUs += delta;
  if (atUs >= fromUs && atUs <= toUs) selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
});
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);

const byFunction = new Map<string, number>();
const byOrigin = new Map<string, number>();
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  if (us === 0) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? `${path.basename(url)}:${lineNumber + 1}` : '';
  const fn = `${functionName || '(anonymous)'} ${where}`.trim();
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  byOrigin.set(origin(url, functionName), (byOrigin.get(origin(url, functionName)) ?? 0) + us);
}

const show = (title: string, entries: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(
      `${((100 * us) / totalUs).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}\n`,
    );
  }
};
process.stdout.write(`${file}: ${(totalUs / 1e6).toFixed(2)} s sampled of ${(atUs / 1e6).toFixed(2)} s\n`);
show('by package / folder (self time)', byOrigin);
show('by function (self time)', byFunction);

/**
 * node_modules/<pkg>, the project folder (src/ocpp, dist/site...), node: internals, or V8's own (GC, idle, program).
 */
function origin(url: string, functionName: string): string {
  if (!url) return `(${functionName || 'native'})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return 'node: internals';
  const project = /\/(src|dist|scripts|test)\/([^/]+)/.exec(url);
  return project ? `${project[1]}/${project[2]}` : url;
}
