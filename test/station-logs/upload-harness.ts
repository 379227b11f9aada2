import { existsSync, readdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Registry } from 'prom-client';
import { onTestFinished } from 'vitest';
import { createHttpServer, uploadRoutes } from '../../src/http/index.js';
import { startFtpUploads } from '../../src/station-logs/ftp-uploads.js';
import { LogFiles, UploadGrants, UploadReception, type UploadGrant } from '../../src/station-logs/index.js';
import { capturedLogger } from '../support/captured-log.js';
import { tempDirForTest } from '../support/for-test.js';
import { freePort } from '../support/free-port.js';

/**
 * The upload side of the station logs on its own: real files in a temp data dir, the real HTTP listener (the
 * daemon's createHttpServer) with the upload routes, grants issued by hand, and what the collections would hear.
 */
export interface UploadHarness {
  dataDir: string;
  files: LogFiles;
  grants: UploadGrants;
  reception: UploadReception;
  heard: Array<{ event: string; logId: string; detail?: unknown }>;
  /** The clock the grants read (ms): tests move it. */
  clock: { ms: number };
  baseUrl: string;
  port: number;
  /** The FTP listener's port, when asked for. */
  ftpPort: number;
  issue(logId: string, windowMs?: number): UploadGrant;
  /** Closes the HTTP listener as the daemon's stop does (no connection closed by force first). */
  closeHttp(): Promise<void>;
  /** Every file and folder under dataDir/logs, relative to it. */
  onDisk(): string[];
}

export async function uploadHarnessForTest(
  maxUploadBytes = 1024 * 1024,
  options: { ftp?: boolean } = {},
): Promise<UploadHarness> {
  const dataDir = tempDirForTest('logs');
  const clock = { ms: Date.now() };
  const files = new LogFiles(dataDir);
  const grants = new UploadGrants(() => clock.ms);
  const heard: UploadHarness['heard'] = [];
  const { logger } = capturedLogger();
  const reception = new UploadReception({
    grants,
    files,
    maxUploadBytes: () => maxUploadBytes,
    logger,
    now: () => clock.ms,
    events: {
      receiving: (grant) => heard.push({ event: 'receiving', logId: grant.logId }),
      arrived: (grant, stored) => heard.push({ event: 'arrived', logId: grant.logId, detail: stored }),
      broken: (grant, reason) => heard.push({ event: 'broken', logId: grant.logId, detail: reason }),
    },
  });
  const app = await createHttpServer({
    logger,
    routes: [uploadRoutes(reception)],
    health: () => [],
    metrics: new Registry(),
    statusGuard: async () => undefined,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  onTestFinished(async () => {
    app.server.closeAllConnections();
    await app.close();
  });
  const port = (app.server.address() as { port: number }).port;
  let ftpPort = 0;
  if (options.ftp) {
    const passiveFrom = await freePort();
    const ftp = await startFtpUploads({
      host: '127.0.0.1',
      port: 0,
      passivePorts: [passiveFrom, passiveFrom + 20],
      passiveAddress: '127.0.0.1',
      reception,
      logger,
      now: () => clock.ms,
    });
    onTestFinished(() => ftp.close());
    ftpPort = ftp.port;
  }
  return {
    ftpPort,
    dataDir,
    files,
    grants,
    reception,
    heard,
    clock,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    closeHttp: () => app.close(),
    issue: (logId, windowMs = 60_000) => grants.issue(logId, 'CP001', clock.ms + windowMs),
    onDisk() {
      const root = path.join(dataDir, 'logs');
      if (!existsSync(root)) return [];
      return readdirSync(root, { recursive: true }).map(String).sort();
    },
  };
}

/**
 * One request with the path sent exactly as given (`..` and `%2e` untouched, as fetch would not) and the body
 * written in chunks; resolves with the answer, or with `closed` when the server cut the connection first.
 */
export function rawRequest(
  port: number,
  method: string,
  requestPath: string,
  options: { headers?: Record<string, string | number>; chunks?: Buffer[]; endBody?: boolean } = {},
): Promise<{ status: number; body: Record<string, unknown> } | { closed: true }> {
  return new Promise((resolve) => {
    const request = http.request({ host: '127.0.0.1', port, method, path: requestPath, headers: options.headers });
    request.on('response', (response) => {
      const parts: Buffer[] = [];
      response.on('data', (c: Buffer) => parts.push(c));
      response.on('end', () => {
        const text = Buffer.concat(parts).toString();
        resolve({ status: response.statusCode ?? 0, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
      });
      response.on('error', () => resolve({ closed: true }));
    });
    request.on('error', () => resolve({ closed: true }));
    for (const chunk of options.chunks ?? []) request.write(chunk);
    if (options.endBody !== false) request.end();
  });
}
