import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { freePort } from './free-port.js';

/**
 * A port handed out by freePort must stay free until the test names it: the kernel must not give it to a listener
 * on port 0 or to an outgoing connection in the meantime (the README receivers failed with EADDRINUSE that way
 * while other test files ran beside them).
 */
describe('freePort', () => {
  it('returns a port outside the kernel ephemeral range, free to listen on', async () => {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number) as [number, number];
    const port = await freePort();
    expect(port < low || port > high, `${port} is inside the ephemeral range ${low}-${high}`).toBe(true);
    const server = createServer();
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
    expect((server.address() as AddressInfo).port).toBe(port);
  });
});
