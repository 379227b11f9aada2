// Both threads: loaded by the delivery thread and by the main thread.
import { request, type Dispatcher } from 'undici';

export interface HttpAnswer {
  status: number;
  contentType: string | undefined;
  /** At most `maxBodyBytes` of the response body, decoded as UTF-8. */
  body: string;
  truncated: boolean;
}

export interface PostOptions {
  dispatcher: Dispatcher;
  headers: Array<[string, string]>;
  body: string;
  signal: AbortSignal;
  maxBodyBytes: number;
}

/**
 * One POST with undici: redirects are not followed (a 3xx is just an answer), and the response body is read
 * only up to maxBodyBytes, then the connection is dropped, so a receiver streaming gigabytes costs nothing.
 */
export async function postBounded(url: URL, options: PostOptions): Promise<HttpAnswer> {
  const response = await request(url, {
    method: 'POST',
    headers: options.headers.flat(),
    body: options.body,
    signal: options.signal,
    dispatcher: options.dispatcher,
  });
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      const room = options.maxBodyBytes - size;
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      size += Math.min(chunk.length, room);
      if (chunk.length > room) {
        truncated = true;
        // Leaving the loop destroys the body stream, which closes the connection instead of draining it.
        break;
      }
    }
  } catch {
    // The status line already arrived and is the answer; a body cut short (timeout, reset) only loses detail.
    truncated = true;
  }
  const contentType = response.headers['content-type'];
  return {
    status: response.statusCode,
    contentType: Array.isArray(contentType) ? contentType[0] : contentType,
    body: Buffer.concat(chunks).toString('utf8'),
    truncated,
  };
}
