// Both threads: loaded by the delivery thread and by the main thread.
import type { Dispatcher } from 'undici';
import type { WebhookAuthConfig } from '../config/index.js';
import { postBounded } from './http-exchange.js';
import { ChargegateError } from '../errors/index.js';

type OAuth2Auth = Extract<WebhookAuthConfig, { type: 'oauth2' }>;

interface CachedToken {
  accessToken: string;
  /** Epoch ms after which the token is fetched again; Infinity when the server gave no expires_in. */
  refreshAt: number;
}

/** Why the partner's token endpoint gave no usable token; the attempt fails and is retried like any other. */
export class PartnerTokenError extends ChargegateError {
  override name = 'PartnerTokenError';
  readonly code = 'CHARGEGATE_PARTNER_TOKEN';
}

const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

/**
 * docs/configuration/webhook-delivery.md#webhook-delivery-installers: the Authorization header a webhook's `auth` asks for. OAuth2
 * client-credentials tokens are cached per (token URL, client, secret, scope, audience) and refreshed shortly before
 * they expire; concurrent workers of one webhook share one token request.
 */
export class PartnerAuth {
  private readonly tokens = new Map<string, CachedToken>();
  private readonly inFlight = new Map<string, Promise<CachedToken>>();

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly now: () => number = Date.now,
    /** Bounds a shared token request on its own: no single waiter's abort signal decides it for the others. */
    private readonly tokenTimeoutMs = 30_000,
  ) {}

  /** The header value, or undefined for `none`. */
  async authorization(auth: WebhookAuthConfig, signal: AbortSignal): Promise<string | undefined> {
    switch (auth.type) {
      case 'none':
        return undefined;
      case 'basic':
        return `Basic ${Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')}`;
      case 'token':
        return `Token ${auth.token}`;
      case 'oauth2':
        return `Bearer ${(await this.token(auth, signal)).accessToken}`;
    }
  }

  /** After a 401 from the receiver: the cached token is not trusted again. */
  invalidate(auth: WebhookAuthConfig): void {
    if (auth.type === 'oauth2') this.tokens.delete(cacheKey(auth));
  }

  private async token(auth: OAuth2Auth, signal: AbortSignal): Promise<CachedToken> {
    const key = cacheKey(auth);
    const cached = this.tokens.get(key);
    if (cached && cached.refreshAt > this.now()) return cached;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.fetchToken(auth, AbortSignal.timeout(this.tokenTimeoutMs)).finally(() =>
        this.inFlight.delete(key),
      );
      this.inFlight.set(key, pending);
    }
    const token = await untilAborted(pending, signal);
    this.tokens.set(key, token);
    return token;
  }

  private async fetchToken(auth: OAuth2Auth, signal: AbortSignal): Promise<CachedToken> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    const headers: Array<[string, string]> = [
      ['Content-Type', 'application/x-www-form-urlencoded'],
      ['Accept', 'application/json'],
    ];
    if (auth.tokenEndpointAuthMethod === 'client_secret_basic') {
      // RFC 6749 2.3.1: id and secret are form-encoded before they are joined and base64-encoded.
      const credentials = `${formEncode(auth.clientId)}:${formEncode(auth.clientSecret)}`;
      headers.push(['Authorization', `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`]);
    } else {
      form.set('client_id', auth.clientId);
      form.set('client_secret', auth.clientSecret);
    }
    if (auth.scope !== undefined) form.set('scope', auth.scope);
    if (auth.audience !== undefined) form.set('audience', auth.audience);
    const requestedAt = this.now();
    const answer = await postBounded(new URL(auth.tokenUrl), {
      dispatcher: this.dispatcher,
      headers,
      body: form.toString(),
      signal,
      maxBodyBytes: MAX_TOKEN_RESPONSE_BYTES,
    });
    let json: unknown;
    try {
      json = JSON.parse(answer.body);
    } catch {
      json = undefined;
    }
    const body = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
    if (answer.status < 200 || answer.status > 299) {
      const reason =
        typeof body.error === 'string'
          ? `: ${body.error}${typeof body.error_description === 'string' ? ` (${body.error_description})` : ''}`
          : '';
      throw new PartnerTokenError(`token endpoint answered ${answer.status}${reason}`);
    }
    if (typeof body.access_token !== 'string' || body.access_token === '')
      throw new PartnerTokenError('token endpoint answer has no access_token');
    if (typeof body.token_type !== 'string' || body.token_type.toLowerCase() !== 'bearer')
      throw new PartnerTokenError(`token endpoint gave token_type ${JSON.stringify(body.token_type)}, expected Bearer`);
    const lifetimeS = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : undefined;
    // Refresh a little early (a tenth of the lifetime, at most a minute) so a token never expires in flight.
    const refreshAt =
      lifetimeS === undefined ? Infinity : requestedAt + lifetimeS * 1000 - Math.min(60_000, lifetimeS * 100);
    return { accessToken: body.access_token, refreshAt };
  }
}

function cacheKey(auth: OAuth2Auth): string {
  return JSON.stringify([
    auth.tokenUrl,
    auth.clientId,
    auth.clientSecret,
    auth.scope,
    auth.audience,
    auth.tokenEndpointAuthMethod,
  ]);
}

/**
 * The promise's outcome, or the signal's reason as soon as this caller gives up waiting; the promise itself runs on.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}
