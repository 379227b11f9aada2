import { freePort, type WorkerHandle } from './processes.js';
import type { ScenarioContext } from './scenario.js';
import type { BareOcppServerApi } from './workers/bare-ocpp-server.js';
import type { StationsApi } from './workers/stations.js';

/**
 * Stations spread over several load-generator processes: one process holding thousands of WebSockets would be
 * the bottleneck (and its open-file limit) rather than the server under test.
 */
export class Fleet {
  private constructor(
    readonly generators: ReadonlyArray<WorkerHandle<StationsApi>>,
    /** Seconds until every station was connected and booted. */
    readonly connectS: number,
  ) {}

  /** Starts the generators and connects every identity; throws unless all of them were accepted. */
  static async connect(
    ctx: ScenarioContext,
    options: {
      url: string;
      identities: readonly string[];
      generators: number;
      concurrency: number;
      recordProfiles?: boolean;
    },
  ): Promise<Fleet> {
    const shares = split(options.identities, options.generators);
    const generators = await Promise.all(
      shares.map((_, i) => ctx.startWorker<StationsApi>('stations', `stations-${i + 1}`)),
    );
    const connects = await Promise.all(
      generators.map((g, i) =>
        g.call('connect', {
          url: options.url,
          identities: shares[i]!,
          concurrency: options.concurrency,
          ...(options.recordProfiles && { recordProfiles: true }),
        }),
      ),
    );
    const failed = connects.reduce((n, c) => n + c.errors, 0);
    if (failed > 0) {
      await Promise.all(generators.map((g) => g.stop()));
      throw new Error(
        `${failed} of ${options.identities.length} stations could not connect and boot; first: ${connects.find((c) => c.firstError)?.firstError}`,
      );
    }
    return new Fleet(generators, Math.max(...connects.map((c) => c.seconds)));
  }

  /** The same command on every generator at once. */
  all<T>(fn: (generator: WorkerHandle<StationsApi>) => Promise<T>): Promise<T[]> {
    return Promise.all(this.generators.map(fn));
  }

  async stop(): Promise<void> {
    await Promise.all(this.generators.map((g) => g.call('close', undefined).catch(() => undefined)));
    await Promise.all(this.generators.map((g) => g.stop()));
  }
}

/** Round-robin shares, so that every generator gets stations of every part of the list. */
function split<T>(items: readonly T[], parts: number): T[][] {
  const shares: T[][] = Array.from({ length: Math.max(1, Math.min(parts, items.length)) }, () => []);
  items.forEach((item, i) => shares[i % shares.length]!.push(item));
  return shares;
}

/** Sums the failures the generators report, and says what the first one was. */
export function failureNote(results: ReadonlyArray<{ errors: number; firstError: string | null }>): string | undefined {
  const errors = results.reduce((n, r) => n + r.errors, 0);
  return errors === 0 ? undefined : `${errors} calls failed; first: ${results.find((r) => r.firstError)?.firstError}`;
}

/** Runs fn against the bare ocpp-rpc baseline server, in its own process, on a port of its own. */
export async function withBareOcppServer<T>(
  ctx: ScenarioContext,
  fn: (url: string, serverPid: number) => Promise<T>,
): Promise<T> {
  const server = await ctx.startWorker<BareOcppServerApi>('bare-ocpp-server');
  const port = await freePort();
  await server.call('listen', { port });
  const result = await fn(`ws://127.0.0.1:${port}/ocpp`, server.pid);
  await server.stop();
  return result;
}

/** One note for a figure from what went wrong on either side. */
export function sidesNote(chargegate: string | undefined, baseline: string | undefined): string | undefined {
  return (
    [chargegate && `chargegate: ${chargegate}`, baseline && `baseline: ${baseline}`].filter(Boolean).join('; ') ||
    undefined
  );
}
