import { readFileSync } from 'node:fs';

/** The running version, from the package.json beside src/ or dist/ (both in a checkout and in an install). */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return manifest.version ?? 'unknown';
}
