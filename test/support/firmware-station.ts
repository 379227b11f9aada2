import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SimulatedStation } from './station.js';
import type { StationV201 } from './station-v201.js';

/**
 * How a simulated station (1.6 or 2.0.1) takes UpdateFirmware, as a real one does: it answers, fetches the image
 * over real HTTP in Range requests (resuming where it was when the connection or the gateway goes away), checks it
 * against the ETag (the image's SHA-256), reports each step with FirmwareStatusNotification, restarts, and boots with
 * the new firmwareVersion. Or, as asked, fails a step or falls silent after its answer.
 */
export interface FirmwareBehaviour {
  /** The firmwareVersion it boots with once installed. */
  newVersion: string;
  /** Reports this failure instead of going on (after Downloading for DownloadFailed, else after Downloaded). */
  fail?: 'DownloadFailed' | 'InstallationFailed';
  /** Answers UpdateFirmware, then sends nothing (a station that hangs). */
  silent?: boolean;
  /** Bytes per Range request (default 64 KiB). */
  chunkBytes?: number;
}

/** What one station did with its updates. */
export interface FirmwareUpdates {
  /** Each UpdateFirmware it got, as sent. */
  readonly received: Array<Record<string, unknown>>;
  /** Each image it fetched whole. */
  readonly images: Buffer[];
  /** Why an update could not go on (a download refused, the gateway away too long): the station reports nothing more. */
  readonly errors: Error[];
  /** Resolves once the update now running ended (installed, the failure reported, or given up: see errors). */
  finished(): Promise<void>;
}

/** The station's side: how it reports, restarts and reconnects; both versions' stations fit. */
interface Device {
  status(status: string, requestId?: number): Promise<unknown>;
  restartWith(version: string): Promise<unknown>;
  /** The location and requestId of an UpdateFirmware request. */
  read(params: Record<string, unknown>): { location: string; requestId?: number };
  answer: Record<string, unknown>;
  v201: boolean;
}

export function updatesFirmware16(station: SimulatedStation, behaviour: FirmwareBehaviour): FirmwareUpdates {
  return follow(
    (handler) => station.handle('UpdateFirmware', (params) => handler(params as Record<string, unknown>)),
    {
      v201: false,
      answer: {},
      read: (params) => ({ location: params.location as string }),
      status: (status) =>
        retrying(
          () => station.call('FirmwareStatusNotification', { status }),
          () => station.reconnect(),
        ),
      restartWith: async (version) => {
        await station.close();
        await retrying(() => station.reconnect());
        return retrying(() => station.boot({ firmwareVersion: version }));
      },
    },
    behaviour,
  );
}

export function updatesFirmware201(station: StationV201, behaviour: FirmwareBehaviour): FirmwareUpdates {
  return follow(
    (handler) =>
      station.handle('UpdateFirmware', (params) => handler(params as unknown as Record<string, unknown>) as never),
    {
      v201: true,
      answer: { status: 'Accepted' },
      read: (params) => ({
        location: (params.firmware as { location: string }).location,
        requestId: params.requestId as number,
      }),
      status: (status, requestId) =>
        retrying(
          () =>
            station.call('FirmwareStatusNotification', {
              status: status as 'Downloading',
              ...(requestId !== undefined && { requestId }),
            }),
          () => station.reconnect(),
        ),
      restartWith: async (version) => {
        await station.close();
        await retrying(() => station.reconnect());
        return retrying(() =>
          station.call('BootNotification', {
            chargingStation: { vendorName: 'ACME', model: 'Wallbox 2.0.1', firmwareVersion: version },
            reason: 'FirmwareUpdate',
          }),
        );
      },
    },
    behaviour,
  );
}

function follow(
  register: (handler: (params: Record<string, unknown>) => unknown) => void,
  device: Device,
  behaviour: FirmwareBehaviour,
): FirmwareUpdates {
  const received: Array<Record<string, unknown>> = [];
  const images: Buffer[] = [];
  const errors: Error[] = [];
  let running: Promise<void> = Promise.resolve();
  register((params) => {
    received.push(params);
    if (!behaviour.silent)
      running = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => update(params))
        .catch((err: unknown) => void errors.push(err as Error));
    return device.answer;
  });
  async function update(params: Record<string, unknown>): Promise<void> {
    const { location, requestId } = device.read(params);
    await device.status('Downloading', requestId);
    if (behaviour.fail === 'DownloadFailed') return void (await device.status('DownloadFailed', requestId));
    images.push(await download(location, behaviour.chunkBytes ?? 65_536));
    await device.status('Downloaded', requestId);
    if (behaviour.fail === 'InstallationFailed') return void (await device.status('InstallationFailed', requestId));
    await device.status('Installing', requestId);
    await device.restartWith(behaviour.newVersion);
    await device.status('Installed', requestId);
  }
  return { received, images, errors, finished: () => running };
}

/** The whole image in Range requests, resumed from where it stopped; checked against the ETag (its SHA-256). */
async function download(location: string, chunkBytes: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let got = 0;
  let size = Infinity;
  let etag = '';
  while (got < size) {
    // The gateway away or restarting (no answer, or 503 while it stops) is waited out, as a station does.
    const response = await retrying(async () => {
      const answer = await fetch(location, { headers: { range: `bytes=${got}-${got + chunkBytes - 1}` } });
      if (answer.status >= 500) throw new Error(`firmware download answered ${answer.status}`);
      return answer;
    });
    if (response.status !== 206) throw new Error(`firmware download answered ${response.status}`);
    const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.headers.get('content-range') ?? '');
    if (!range || Number(range[1]) !== got) throw new Error(`unexpected Content-Range ${String(range?.[0])}`);
    size = Number(range[3]);
    etag = response.headers.get('etag') ?? '';
    const body = await response
      .arrayBuffer()
      .then((b) => Buffer.from(b))
      .catch(() => undefined);
    // A connection cut mid-body (the gateway killed): ask again for what is missing.
    if (!body) continue;
    parts.push(body);
    got += body.length;
  }
  const image = Buffer.concat(parts);
  const sha256 = createHash('sha256').update(image).digest('hex');
  if (etag !== `"${sha256}"`) throw new Error(`downloaded image's SHA-256 ${sha256} is not the ETag ${etag}`);
  return image;
}

/**
 * Tries again while the gateway is away (killed, restarting), connecting again first when given how: a station keeps
 * at it.
 */
async function retrying<T>(attempt: () => Promise<T>, reconnect?: () => Promise<unknown>): Promise<T> {
  const until = Date.now() + RETRY_FOR_MS;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() > until) throw err;
      await sleep(200);
      await reconnect?.().catch(() => undefined);
    }
  }
}

const RETRY_FOR_MS = 60_000;
