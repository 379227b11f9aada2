// Both threads: loaded by the delivery thread and by the main thread.
import { randomUUID } from 'node:crypto';
import { Agent, type Dispatcher } from 'undici';
import type { WebhookConfig } from '../config/index.js';
import { envelopeBody, type DeliverableEvent } from './envelope.js';
import { postBounded, type HttpAnswer } from './http-exchange.js';
import { PartnerAuth } from './partner-auth.js';
import { keyFor, signRequest, type WebhookSigningKeys } from './request-signature.js';

/** What one attempt came to: `delivered` only for a 2xx within the timeout (docs/configuration/webhook-delivery.md#webhook-delivery-installers). */
export interface AttemptOutcome {
  delivered: boolean;
  /** HTTP status of the last answer, absent when none came (timeout, connection error). */
  status?: number;
  /** Why the attempt failed, for logs, the dead-letter list and `webhook status`. */
  error?: string;
  /** The start of the answer's body, for `webhook test` and failure diagnostics. */
  responseBody: string;
  contentType?: string;
  requestId: string;
  startedAt: number;
  durationMs: number;
  /** The caller's signal stopped the attempt (webhook disabled, daemon stopping): not the receiver's fault. */
  interrupted: boolean;
}

interface SendOptions {
  timeZone: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** The same event's request, signed ahead by prepare(); used if still fresh and made for this webhook and key. */
  prepared?: Promise<PreparedRequest>;
}

/** One attempt's request, signed and ready to go, and what it was made for. */
export interface PreparedRequest {
  requestId: string;
  body: string;
  /** Content headers, x-request-id and the signature headers, in the order they are sent. */
  headers: Array<[string, string]>;
  preparedAt: number;
  url: string;
  signature: WebhookConfig['signature'];
  timeZone: string;
  /** The id of the key that signed it. */
  keyId: string;
}

interface WebhookSenderOptions {
  /** The keystore's current webhook signing keys, asked for per attempt so a rotation applies at once. */
  signingKeys: () => WebhookSigningKeys;
  now?: () => number;
}

const CONTENT_TYPE = 'application/json';
// Enough to show what a receiver said; anything beyond is dropped unread.
const MAX_RESPONSE_BYTES = 4096;
/**
 * The oldest a request signed ahead may be when it leaves; older, it is signed again. Its envelope `timestamp` and
 * signature `created` say when it was signed, which must stay the time it was sent for the partner.
 */
const MAX_PREPARED_AGE_MS = 500;

/**
 * Sends one webhook attempt: envelope with a fresh timestamp, fresh x-request-id, fresh signature, partner
 * authorization. An OAuth2 receiver answering 401 gets one immediate retry with a newly fetched token.
 */
export class WebhookSender {
  private readonly dispatcher: Dispatcher;
  private readonly auth: PartnerAuth;
  private readonly signingKeys: () => WebhookSigningKeys;
  private readonly now: () => number;

  constructor(options: WebhookSenderOptions) {
    this.signingKeys = options.signingKeys;
    this.now = options.now ?? Date.now;
    // Our own pool, so stopping delivery closes exactly the sockets delivery opened.
    this.dispatcher = new Agent({ keepAliveTimeout: 30_000, connect: { timeout: 10_000 } });
    this.auth = new PartnerAuth(this.dispatcher, this.now);
  }

  async send(webhook: WebhookConfig, event: DeliverableEvent, options: SendOptions): Promise<AttemptOutcome> {
    const startedAt = this.now();
    const clock = performance.now();
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let requestId: string | undefined;
    try {
      let request =
        (await this.fresh(options.prepared, webhook, options.timeZone)) ??
        (await this.prepare(webhook, event, options.timeZone));
      requestId = request.requestId;
      let answer = await this.exchange(webhook, request, signal);
      if (answer.status === 401 && webhook.auth.type === 'oauth2') {
        this.auth.invalidate(webhook.auth);
        request = await this.prepare(webhook, event, options.timeZone);
        requestId = request.requestId;
        answer = await this.exchange(webhook, request, signal);
      }
      const delivered = answer.status >= 200 && answer.status <= 299;
      return {
        delivered,
        status: answer.status,
        ...(!delivered && { error: `HTTP ${answer.status}${answer.body ? `: ${answer.body.slice(0, 200)}` : ''}` }),
        responseBody: answer.body,
        ...(answer.contentType !== undefined && { contentType: answer.contentType }),
        requestId,
        startedAt,
        durationMs: performance.now() - clock,
        interrupted: false,
      };
    } catch (err) {
      const interrupted = options.signal?.aborted === true;
      const error = interrupted
        ? 'interrupted'
        : timeout.aborted
          ? `no answer within ${options.timeoutMs} ms`
          : describeError(err);
      return {
        delivered: false,
        error,
        responseBody: '',
        requestId: requestId ?? randomUUID(),
        startedAt,
        durationMs: performance.now() - clock,
        interrupted,
      };
    }
  }

  /**
   * Builds and signs the event's next request (envelope with the current time, fresh x-request-id, fresh
   * signature). A queue signs the request after the one in flight meanwhile, and passes it to send().
   */
  async prepare(webhook: WebhookConfig, event: DeliverableEvent, timeZone: string): Promise<PreparedRequest> {
    const url = new URL(webhook.url);
    const requestId = randomUUID();
    const preparedAt = this.now();
    const body = envelopeBody(event, new Date(preparedAt), timeZone);
    const keys = this.signingKeys();
    const signatureHeaders = await signRequest(
      webhook.signature,
      { method: 'POST', url, requestId, contentType: CONTENT_TYPE, body },
      keys,
      Math.floor(preparedAt / 1000),
    );
    const headers: Array<[string, string]> = [
      ['Content-Type', CONTENT_TYPE],
      ['Content-Length', String(Buffer.byteLength(body))],
      ['x-request-id', requestId],
      ...signatureHeaders,
    ];
    return {
      requestId,
      body,
      headers,
      preparedAt,
      url: webhook.url,
      signature: webhook.signature,
      timeZone,
      keyId: keyFor(webhook.signature, keys).id,
    };
  }

  async close(): Promise<void> {
    await this.dispatcher.destroy();
  }

  /** The request signed ahead, if it signed and still fits: fresh, same URL, profile, zone and key. */
  private async fresh(
    prepared: Promise<PreparedRequest> | undefined,
    webhook: WebhookConfig,
    timeZone: string,
  ): Promise<PreparedRequest | undefined> {
    // A failed signing ahead is not reported: signing again in send() reports it as the attempt's error.
    const request = await prepared?.catch(() => undefined);
    if (!request || this.now() - request.preparedAt > MAX_PREPARED_AGE_MS) return undefined;
    const fits =
      request.url === webhook.url &&
      request.signature.profile === webhook.signature.profile &&
      request.signature.alg === webhook.signature.alg &&
      request.timeZone === timeZone &&
      request.keyId === keyFor(webhook.signature, this.signingKeys()).id;
    return fits ? request : undefined;
  }

  private async exchange(webhook: WebhookConfig, request: PreparedRequest, signal: AbortSignal): Promise<HttpAnswer> {
    const authorization = await this.auth.authorization(webhook.auth, signal);
    const headers =
      authorization === undefined
        ? request.headers
        : [...request.headers, ['Authorization', authorization] as [string, string]];
    return postBounded(new URL(request.url), {
      dispatcher: this.dispatcher,
      headers,
      body: request.body,
      signal,
      maxBodyBytes: MAX_RESPONSE_BYTES,
    });
  }
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  const prefix = typeof code === 'string' && !err.message.includes(code) ? `${code} ` : '';
  return `${prefix}${err.message}${cause}`;
}
