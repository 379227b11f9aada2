import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../../test/support/cli.js';
import { runBench } from './runner.js';
import { SCENARIOS } from './scenarios/index.js';
import { renderResults } from './table.js';

/** `npm run bench [-- --quick] [--only 1,3] [--out FILE] [--profile DIR]`: prints the table, writes the JSON. */
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string', default: path.join(ROOT, 'dist/bench/results.json') },
    profile: { type: 'string' },
  },
});

const only = values.only?.split(',').map(Number);
if (only?.some((id) => !Number.isInteger(id) || id < 1 || id > SCENARIOS.length)) {
  process.stderr.write(`bench: --only takes scenario numbers 1-${SCENARIOS.length}, e.g. --only 1,5\n`);
  process.exit(2);
}

const results = await runBench({
  quick: values.quick,
  out: path.resolve(values.out),
  ...(only && { only }),
  ...(values.profile && { profileDir: path.resolve(values.profile) }),
});
process.stdout.write(`${renderResults(results)}\n\nresults: ${path.resolve(values.out)}\n`);
