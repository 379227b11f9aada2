import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../test/support/cli.js';

export interface BenchBuild {
  /** Compiled worker modules: forked with plain node, since a TypeScript loader adds ~50 MB to every process. */
  workerDir: string;
  /** true: the daemon runs from dist/ as installed; false: from the sources through tsx (the build failed). */
  daemonBuilt: boolean;
  daemonCommand: string;
  notes: string[];
}

const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const WORKER_SOURCES = path.join(ROOT, 'scripts/bench/workers');

/**
 * Builds what the bench runs. The daemon's dist/ comes from `npm run build`; the workers are compiled by the same
 * tsc into dist/bench. A type error elsewhere in the tree still emits the workers, so the run goes on and says so.
 */
export function buildForBench(): BenchBuild {
  const notes: string[] = [];
  let daemonBuilt = true;
  try {
    // Rewriting a fresh dist/ would only race other processes reading it (npm test's pretest has just built it).
    if (!distIsFresh())
      execFileSync(process.execPath, [TSC, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'pipe' });
  } catch (err) {
    daemonBuilt = false;
    notes.push(
      `npm run build failed, so the daemon runs from source through tsx (RSS then includes the loader, ~50 MB): ${firstLines(err)}`,
    );
  }
  try {
    execFileSync(process.execPath, [TSC, '-p', 'scripts/bench/tsconfig.json'], { cwd: ROOT, stdio: 'pipe' });
  } catch (err) {
    notes.push(`the bench workers compiled with type errors: ${firstLines(err)}`);
  }
  const workerDir = path.join(ROOT, 'dist/bench/scripts/bench/workers');
  const missing = readdirSync(WORKER_SOURCES)
    .filter((f) => f.endsWith('.ts'))
    .filter((f) => !existsSync(path.join(workerDir, f.replace(/\.ts$/, '.js'))));
  if (missing.length > 0) throw new Error(`bench workers not compiled: ${missing.join(', ')}; ${notes.join('; ')}`);
  return {
    workerDir,
    daemonBuilt,
    daemonCommand: daemonBuilt
      ? 'node dist/cli/main.js run --config <bench config>'
      : 'node --import tsx src/cli/main.ts run --config <bench config>',
    notes,
  };
}

/** dist/ was built after the last change to any source file. */
function distIsFresh(): boolean {
  const built = path.join(ROOT, 'dist/cli/main.js');
  if (!existsSync(built)) return false;
  const sources = readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.ts'),
  );
  const newestSource = Math.max(...sources.map((f) => statSync(path.join(ROOT, 'src', f)).mtimeMs));
  return newestSource < statSync(built).mtimeMs;
}

function firstLines(err: unknown): string {
  const output = (err as { stdout?: Buffer }).stdout?.toString() || (err as Error).message;
  return output.split('\n').slice(0, 5).join(' | ');
}
