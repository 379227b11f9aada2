import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';

const run = promisify(execFile);

/**
 * In a fresh process (the module cache is per process): which of ocpp-rpc's schema files are read after loading
 * chargegate's OCPP edge, after a 1.6 call, and after a 2.0.1 call.
 */
const SCRIPT = `
import { createRequire } from 'node:module';
import { createRpcServer, createRpcClient } from ${JSON.stringify(path.join(ROOT, 'src/ocpp/rpc.ts'))};
const require = createRequire(import.meta.url);
const loaded = () => Object.keys(require.cache).filter((k) => k.includes('/schemas/')).map((k) => k.split('/').pop()).sort();
const steps = { afterLoad: loaded() };
const server = createRpcServer({ callTimeoutMs: 5000, maxMessageBytes: 65536, maxBadMessages: 20 });
server.on('client', (client) => client.handle('Heartbeat', () => ({ currentTime: new Date().toISOString() })));
const http = await server.listen(0, '127.0.0.1');
const url = 'ws://127.0.0.1:' + http.address().port;
const v16 = createRpcClient({ endpoint: url, identity: 'CP16', reconnect: false });
await v16.connect();
await v16.call('Heartbeat', {});
steps.after16 = loaded();
const { RPCClient } = require('ocpp-rpc');
const v201 = new RPCClient({ endpoint: url, identity: 'CP201', protocols: ['ocpp2.0.1'], strictMode: true, reconnect: false });
await v201.connect();
await v201.call('Heartbeat', {});
steps.after201 = loaded();
await v16.close({ force: true });
await v201.close({ force: true });
await server.close({ force: true });
console.log(JSON.stringify(steps));
`;

describe("ocpp-rpc's schemas are read when first needed", () => {
  it(
    'none at load, 1.6 on the first 1.6 call, 2.0.1 only once a 2.0.1 station calls, 2.1 never',
    async () => {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
        cwd: ROOT,
        timeout: 60_000,
      });
      expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({
        afterLoad: [],
        after16: ['ocpp1_6.json'],
        after201: ['ocpp1_6.json', 'ocpp2_0_1.json'],
      });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
