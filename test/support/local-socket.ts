import { Agent, request } from 'undici';

/**
 * One HTTP request to a daemon's local channel (dataDir/chargegate.sock), as the CLI makes it: its status and JSON
 * body. Rejects as undici does when nothing listens there (ECONNREFUSED, ENOENT).
 */
export async function requestOverSocket(
  socketPath: string,
  method: 'GET' | 'POST',
  path: string,
  body?: object,
): Promise<{ status: number; body: unknown }> {
  const dispatcher = new Agent({ connect: { socketPath } });
  try {
    const response = await request(`http://localhost${path}`, {
      method,
      dispatcher,
      ...(body && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: await response.body.json() };
  } finally {
    await dispatcher.close();
  }
}
