import { Client } from 'basic-ftp';
import { Readable } from 'node:stream';
import type { SimulatedStation } from '../support/station.js';
import type { StationV201 } from '../support/station-v201.js';

/** How a station uploads to the location it was given: HTTP PUT, HTTP multipart POST, or FTP (basic-ftp). */
export type UploadHow = 'put' | 'multipart' | 'ftp';

/** What a station does when asked for its diagnostics. */
export interface UploadBehaviour {
  fileName: string;
  content: Buffer;
  /** Default: as the location's scheme allows (PUT for http). */
  how?: UploadHow;
  /** Sent after the upload instead of Uploaded (UploadFailed, ...), or `none` for a station that says nothing. */
  finalStatus?: string;
  /** The upload is skipped: the station only claims it. */
  skipUpload?: boolean;
  /** Waited for between the upload and the final notification. */
  beforeFinal?: Promise<void>;
}

/** Uploads `content` to an upload location the way a station would. */
export async function uploadTo(location: string, fileName: string, content: Buffer, how?: UploadHow): Promise<void> {
  const url = new URL(location);
  if (url.protocol === 'ftp:') {
    const client = new Client(10_000);
    try {
      await client.access({
        host: url.hostname,
        port: Number(url.port),
        user: decodeURIComponent(url.username),
        password: decodeURIComponent(url.password),
      });
      await client.uploadFrom(Readable.from([content]), fileName);
    } finally {
      client.close();
    }
    return;
  }
  const response =
    how === 'multipart'
      ? await fetch(location, { method: 'POST', body: formWith(fileName, content) })
      : await fetch(`${location}${fileName}`, { method: 'PUT', body: content });
  if (response.status !== 201) throw new Error(`upload answered ${response.status}: ${await response.text()}`);
}

function formWith(fileName: string, content: Buffer): FormData {
  const form = new FormData();
  form.append('file', new Blob([content]), fileName);
  return form;
}

/**
 * A 1.6 station answering GetDiagnostics as real ones do: the file name at once, then DiagnosticsStatusNotification
 * Uploading, the upload, and Uploaded (or what `finalStatus` says). Resolves `done` once it has said its last word.
 */
export function uploadsDiagnostics16(station: SimulatedStation, behaviour: UploadBehaviour): { done: Promise<void> } {
  let finished: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finished = resolve));
  station.handle('GetDiagnostics', (params) => {
    const { location } = params as { location: string };
    setImmediate(() => {
      void (async () => {
        await station.call('DiagnosticsStatusNotification', { status: 'Uploading' });
        if (!behaviour.skipUpload)
          await uploadTo(location, behaviour.fileName, behaviour.content, behaviour.how).catch(() => undefined);
        await behaviour.beforeFinal;
        if (behaviour.finalStatus !== 'none')
          await station.call('DiagnosticsStatusNotification', { status: behaviour.finalStatus ?? 'Uploaded' });
        finished();
      })();
    });
    return { fileName: behaviour.fileName };
  });
  return { done };
}

/** A 2.0.1 station answering GetLog: Accepted with the file name, then LogStatusNotification with the requestId. */
export function uploadsLog201(station: StationV201, behaviour: UploadBehaviour): { done: Promise<void> } {
  let finished: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finished = resolve));
  station.handle('GetLog', (params) => {
    const { requestId, log } = params;
    setImmediate(() => {
      void (async () => {
        await station.call('LogStatusNotification', { status: 'Uploading', requestId });
        if (!behaviour.skipUpload)
          await uploadTo(log.remoteLocation, behaviour.fileName, behaviour.content, behaviour.how).catch(
            () => undefined,
          );
        await behaviour.beforeFinal;
        if (behaviour.finalStatus !== 'none')
          await station.call('LogStatusNotification', {
            status: (behaviour.finalStatus ?? 'Uploaded') as 'Uploaded',
            requestId,
          });
        finished();
      })();
    });
    return { status: 'Accepted', filename: behaviour.fileName };
  });
  return { done };
}
