import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';

/**
 * A TCP port free on this host right now: for a server that must be named before it starts (an issuer URL, a
 * simulator both sides are told about), or for a refused connection.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = createServer();
  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}
