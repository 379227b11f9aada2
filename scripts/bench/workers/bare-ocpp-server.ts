import { RPCServer } from 'ocpp-rpc';
import { serveWorker } from '../worker-protocol.js';

/**
 * The OCPP baseline: a bare ocpp-rpc server in strict mode that answers the calls the capacity and Authorize
 * scenarios send with constants and does no work, so the load generator measures the library's own ceiling.
 */
let server: RPCServer | undefined;

export const bareOcppServerApi = {
  async listen(payload: { port: number }): Promise<void> {
    server = new RPCServer({ protocols: ['ocpp1.6'], strictMode: true });
    server.on('client', (client) => {
      client.handle('BootNotification', () => ({
        status: 'Accepted',
        interval: 300,
        currentTime: new Date().toISOString(),
      }));
      client.handle('Heartbeat', () => ({ currentTime: new Date().toISOString() }));
      client.handle('StatusNotification', () => ({}));
      client.handle('MeterValues', () => ({}));
      client.handle('Authorize', () => ({ idTagInfo: { status: 'Accepted' } }));
    });
    await server.listen(payload.port, '127.0.0.1');
  },
  async close(): Promise<void> {
    await server?.close({ force: true });
  },
};

export type BareOcppServerApi = typeof bareOcppServerApi;

serveWorker(bareOcppServerApi);
