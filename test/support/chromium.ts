import { existsSync } from 'node:fs';

/** Debian's chromium (.ci/run installs it); the flags keep it off the closed network. */
export const CHROMIUM = {
  executablePath: '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
};

// CI installs chromium (.ci/run) and runs with CI=true: there a missing browser fails the suite; on a developer
// machine without it, the browser tests are skipped.
export const chromiumMissing = !existsSync(CHROMIUM.executablePath);
if (chromiumMissing && process.env.CI === 'true')
  throw new Error(`${CHROMIUM.executablePath} is missing (apt-get install chromium)`);
