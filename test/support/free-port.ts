import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';

/** Ports below this are left to well-known services. */
const LOWEST = 10_000;

/**
 * A TCP port free on this host right now: for a server that must be named before it starts (an issuer URL, a
 * simulator both sides are told about), or for a refused connection. Picked below the kernel's ephemeral range, so
 * no listener on port 0 and no outgoing connection (of this test or of the test files running beside it) takes it
 * before the test names it.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const below = ephemeralRangeStart();
  for (let tries = 0; tries < 50 && below > LOWEST; tries += 1) {
    const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
    if (await listens(host, port)) return port;
  }
  // No room below the range (or none found free): any port the kernel gives.
  return listens(host, 0);
}

function ephemeralRangeStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return 0;
  }
}

/** Listens on the port and closes again: the port it got, 0 if that one is taken. */
async function listens(host: string, port: number): Promise<number> {
  const server = createServer();
  server.listen(port, host);
  try {
    // Rejects on the server's 'error' (EADDRINUSE).
    await once(server, 'listening');
  } catch {
    return 0;
  }
  const { port: got } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return got;
}
