import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';

const run = promisify(execFile);

describe('the generated OCPP message types', () => {
  it(
    'are what the schemas ocpp-rpc validates with give today (npm run generate:ocpp-types after an upgrade)',
    async () => {
      const result = await run(
        process.execPath,
        ['--import', 'tsx', path.join(ROOT, 'scripts/generate-ocpp-types.ts'), '--check'],
        { cwd: ROOT },
      ).then(
        ({ stderr }) => ({ code: 0, stderr }),
        (err: { code: number; stderr: string }) => err,
      );
      expect(result).toEqual({ code: 0, stderr: '' });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
