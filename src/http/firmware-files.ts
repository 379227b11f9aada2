import type { FastifyInstance } from 'fastify';
import { openImage, type FirmwareImage } from '../firmware/index.js';
import { ApiError } from './http-errors.js';

/**
 * How long a download may go without the station taking a byte before its connection is closed: a stalled reader
 * holds its own socket and file, nothing else, and not for ever.
 */
export const DOWNLOAD_IDLE_TIMEOUT_MS = 120_000;

/**
 * How long one response may take in all (contract 11.4: bounded in time): a reader taking a byte now and then is
 * never idle, yet holds its socket and file no longer than `floorMs` plus its bytes at `minBytesPerS`. A station cut
 * there resumes with a Range request. docs/operating/firmware-and-logs.md#how-stations-fetch-it
 */
export interface DownloadBounds {
  idleTimeoutMs: number;
  floorMs: number;
  minBytesPerS: number;
}

export const DOWNLOAD_BOUNDS: DownloadBounds = {
  idleTimeoutMs: DOWNLOAD_IDLE_TIMEOUT_MS,
  floorMs: 600_000,
  minBytesPerS: 16 * 1024,
};

export interface FirmwareFilesDeps {
  dataDir: string;
  /** The image a token and file name stand for while the token is valid (FirmwareRollouts.download). */
  download(token: string, fileName: string): FirmwareImage | undefined;
  /** DOWNLOAD_BOUNDS unless given (tests make them short). */
  bounds?: DownloadBounds;
}

/**
 * GET and HEAD /firmware/{token}/{file} (contract 11.2, 11.4): the image of the station's update, streamed from its
 * file, with a single byte range (206, 416), an ETag of its SHA-256 and If-Range, so a station resumes a broken
 * download. Any other path, a wrong or expired token or another file name is 404 without a file opened; no listing.
 */
export async function registerFirmwareFiles(app: FastifyInstance, deps: FirmwareFilesDeps): Promise<void> {
  app.route<{ Params: { token: string; file: string } }>({
    method: ['GET', 'HEAD'],
    url: '/firmware/:token/:file',
    handler: async (request, reply) => {
      const { token, file } = request.params;
      const image = deps.download(token, file);
      const handle = image && (await openImage(deps.dataDir, image));
      if (!image || !handle) throw new ApiError(404, 'not_found', `no route ${request.method} /firmware/...`);
      const etag = `"${image.sha256}"`;
      const ifRange = request.headers['if-range'];
      const range = ifRange === undefined || ifRange === etag ? rangeOf(request.headers.range, image.size) : undefined;
      if (range === 'unsatisfiable') {
        await handle.close();
        throw new ApiError(416, 'range_not_satisfiable', `the image has ${image.size} bytes`, {
          'content-range': `bytes */${image.size}`,
        });
      }
      const { start, end } = range ?? { start: 0, end: image.size - 1 };
      void reply
        .header('accept-ranges', 'bytes')
        .header('etag', etag)
        .header('content-type', 'application/octet-stream')
        .header('cache-control', 'no-store')
        .header('content-length', String(end - start + 1));
      if (range) void reply.status(206).header('content-range', `bytes ${start}-${end}/${image.size}`);
      if (request.method === 'HEAD') {
        await handle.close();
        return reply.send();
      }
      const { idleTimeoutMs, floorMs, minBytesPerS } = deps.bounds ?? DOWNLOAD_BOUNDS;
      const { socket } = request.raw;
      socket.setTimeout(idleTimeoutMs, () => socket.destroy());
      const deadlineMs = floorMs + Math.ceil(((end - start + 1) / minBytesPerS) * 1000);
      const deadline = setTimeout(() => {
        request.log.info({ deadlineMs, file }, 'firmware download cut at its deadline');
        socket.destroy();
      }, deadlineMs);
      reply.raw.once('close', () => clearTimeout(deadline));
      return reply.send(handle.createReadStream({ start, end }));
    },
  });
}

/**
 * The one range of a Range header (`bytes=a-b`, `bytes=a-`, `bytes=-n`); undefined for none, several or a malformed
 * one (the whole image is sent, as RFC 9110 lets a server ignore what it does not take); 'unsatisfiable' when it
 * starts past the end.
 */
export function rangeOf(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  const match = header === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return undefined;
  const [, from = '', to = ''] = match;
  if (from === '') {
    if (to === '') return undefined;
    const suffix = Number(to);
    return suffix === 0 ? 'unsatisfiable' : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(from);
  if (to !== '' && Number(to) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: to === '' ? size - 1 : Math.min(Number(to), size - 1) };
}
