import http from 'node:http';
import { onTestFinished } from 'vitest';
import type { AddressInfo } from 'node:net';
import { createRpcServer, type RpcServer } from '../../src/ocpp/index.js';

/** A CPO's central system on ocpp-rpc (strict), answering Authorize from a table; it can go silent or away. */
export class FakeCpo {
  readonly identities: string[] = [];
  readonly answers = new Map<string, { status: string; expiryDate?: string }>();
  silent = false;
  private stopped: Promise<void> | undefined;
  private constructor(
    private readonly server: http.Server,
    private readonly rpc: RpcServer<object>,
  ) {}

  static async start(): Promise<FakeCpo> {
    const rpc = createRpcServer<object>({ callTimeoutMs: 5000, maxMessageBytes: 65_536, maxBadMessages: 20 });
    const server = http.createServer();
    server.on('upgrade', rpc.handleUpgrade);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const cpo = new FakeCpo(server, rpc);
    rpc.on('client', (client) => {
      cpo.identities.push(client.identity);
      client.handle('Authorize', ({ params, signal }) => {
        if (cpo.silent) return new Promise((resolve) => signal.addEventListener('abort', resolve));
        const { idTag } = params as { idTag: string };
        return { idTagInfo: cpo.answers.get(idTag) ?? { status: 'Invalid' } };
      });
    });
    return cpo;
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}/cpo`;
  }

  /** Once: a test may take the CPO away itself before the cleanup registered for it runs. */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      await this.rpc.close({ force: true });
      this.server.closeAllConnections();
      await new Promise<void>((resolve) => this.server.close(() => resolve()));
    })();
    return this.stopped;
  }

  /** A CPO for the running test, taken away when the test finishes. */
  static async startForTest(): Promise<FakeCpo> {
    const cpo = await FakeCpo.start();
    onTestFinished(() => cpo.stop());
    return cpo;
  }
}
