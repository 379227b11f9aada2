import type { UpstreamClient, UpstreamConnect } from '../authorization/index.js';
import type { Ocpp16Actions } from './v16/messages.js';
import { createRpcClient, RPC_CLOSING, typedCall } from './rpc.js';

/**
 * Opens an OCPP 1.6-J connection to the CPO under the station's own identity (ws://cpo/ocpp/<stationId>), the
 * way the station would if it were connected to the CPO directly. ocpp-rpc reconnects it after drops.
 */
export const connectUpstreamAsStation: UpstreamConnect = async (
  url: string,
  stationId: string,
): Promise<UpstreamClient> => {
  const client = createRpcClient({ endpoint: url, identity: stationId, reconnect: true });
  await client.connect();
  const call = typedCall<Ocpp16Actions>(client);
  return {
    async authorize(idTag) {
      const response = await call('Authorize', { idTag });
      return response.idTagInfo;
    },
    isClosed: () => client.state >= RPC_CLOSING,
    async close() {
      await client.close({ force: true });
    },
  };
};
