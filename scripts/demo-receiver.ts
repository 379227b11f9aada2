/**
 * A partner's webhook receiver, for demos and for trying chargegate by hand: it verifies every request's signature
 * against GET {issuer}/.well-known/jwks.json (the `sign` key for the documented profile, the keyid's key for rfc9421,
 * RSA or Ed25519; after a failure the JWKS is fetched again once and every signing key tried, which is what a partner
 * should do across key rotations) and prints each event.
 * Verified requests get 204, others 401 (so chargegate retries them).
 *
 *   npx tsx scripts/demo-receiver.ts [--issuer http://127.0.0.1:8080] [--port 7000] [--host 127.0.0.1]
 *
 * The defaults match config/default.yaml: with `npm start` running, `chargegate webhook test partner-a` or a
 * station simulator shows signed events arriving here.
 */
import { pathToFileURL } from 'node:url';
import { startReceiver, type Receiver } from '../test/support/receiver.js';
import { scriptArguments } from './command-line.js';
import { JwksWebhookVerifier } from '../test/support/webhook-verifier.js';

export interface DemoReceiverOptions {
  /** http.issuer of the chargegate daemon, where its JWKS is; read at the first request. */
  issuer: string | (() => string);
  host?: string;
  port?: number;
  /** Where the event lines go (stdout by default). */
  print?: (line: string) => void;
}

export interface DemoReceiver {
  receiver: Receiver;
  verified: number;
  rejected: number;
}

export async function startDemoReceiver(options: DemoReceiverOptions): Promise<DemoReceiver> {
  const print = options.print ?? ((line: string) => console.log(line));
  let verifier: JwksWebhookVerifier | undefined;
  const demo: DemoReceiver = { receiver: undefined as unknown as Receiver, verified: 0, rejected: 0 };
  demo.receiver = await startReceiver(
    async (request) => {
      let envelope: { eventId?: string; eventType?: string; siteId?: string; timestamp?: string; payload?: unknown } =
        {};
      try {
        envelope = request.json();
      } catch {
        // Printed as rejected below: the signature cannot make a non-JSON body acceptable.
      }
      const issuer = typeof options.issuer === 'string' ? options.issuer : options.issuer();
      verifier ??= new JwksWebhookVerifier(`${issuer.replace(/\/$/, '')}/.well-known/jwks.json`);
      const kid = await verifier
        .verify({ method: request.method, url: request.url, headers: request.headers, body: request.body })
        .catch(() => undefined);
      const summary = `${envelope.eventType ?? '?'} ${envelope.eventId ?? '?'} site ${envelope.siteId ?? '?'} at ${envelope.timestamp ?? '?'} ${JSON.stringify(envelope.payload ?? null)}`;
      if (kid === undefined || envelope.eventId === undefined) {
        demo.rejected += 1;
        print(
          `REJECTED (signature does not verify) x-request-id ${String(request.headers['x-request-id'])}: ${summary}`,
        );
        return {
          status: 401,
          body: JSON.stringify({ error: 'invalid_signature' }),
          headers: { 'Content-Type': 'application/json' },
        };
      }
      demo.verified += 1;
      print(`verified (kid ${kid}) ${summary}`);
      return { status: 204 };
    },
    { host: options.host ?? '127.0.0.1', port: options.port ?? 7000 },
  );
  return demo;
}

const USAGE = 'usage: demo-receiver [--issuer http://127.0.0.1:8080] [--port 7000] [--host 127.0.0.1]';

/** The command line as startDemoReceiver takes it, or the exit code (see scriptArguments). */
function parseCommandLine(): { issuer: string; host: string; port: number } | number {
  return scriptArguments(
    USAGE,
    {
      issuer: { type: 'string', default: 'http://127.0.0.1:8080' },
      port: { type: 'string', default: '7000' },
      host: { type: 'string', default: '127.0.0.1' },
    },
    (values) => {
      const port = Number(values.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new Error(`--port: a TCP port (0-65535), not "${values.port}"`);
      return { issuer: values.issuer, host: values.host, port };
    },
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const options = parseCommandLine();
  if (typeof options === 'number') process.exit(options);
  const demo = await startDemoReceiver(options);
  console.log(
    `demo receiver on ${demo.receiver.url()}, verifying against ${options.issuer}/.well-known/jwks.json (Ctrl-C to stop)`,
  );
  process.once('SIGINT', () => void demo.receiver.close().then(() => process.exit(0)));
  process.once('SIGTERM', () => void demo.receiver.close().then(() => process.exit(0)));
}
