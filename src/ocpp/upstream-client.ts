import type { UpstreamClient, UpstreamConnect } from '../authorization/index.js';
import type { AuthorizeResponse } from './v16/messages.js';
import { createRpcClient, RPC_CLOSING } from './rpc.js';

/**
 * Opens an OCPP 1.6-J connection to the CPO under the station's own identity (ws://cpo/ocpp/<stationId>), the
 * way the station would if it were connected to the CPO directly. ocpp-rpc reconnects it after drops.
 */
export const connectUpstreamAsStation: UpstreamConnect = async (url: string, stationId: string): Promise<UpstreamClient> => {
  const client = createRpcClient({ endpoint: url, identity: stationId, reconnect: true });
  await client.connect();
  return {
    async authorize(idTag) {
      const response = (await client.call('Authorize', { idTag })) as AuthorizeResponse;
      return response.idTagInfo;
    },
    isClosed: () => client.state >= RPC_CLOSING,
    async close() {
      await client.close({ force: true });
    },
  };
};
