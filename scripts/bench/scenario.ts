import { tempSite, type TempSite } from '../../test/support/temp-site.js';
import { startChargegate, type ChargegateProcess, type DaemonLauncher } from './chargegate.js';
import type { KeystoreTemplate } from '../../test/support/keystore-template.js';
import type { ProcessGroup, WorkerHandle } from './processes.js';
import { makeFigure, type Figure, type FigureInput, type ScenarioResult } from './results.js';
import type { BenchSettings } from './settings.js';
import type { WorkerApi } from './worker-protocol.js';

/** One row of issue 7's table: it measures chargegate and, where the issue names one, its baseline. */
export interface Scenario {
  id: number;
  title: string;
  run(ctx: ScenarioContext): Promise<void>;
}

/**
 * What a scenario gets from the runner. Each side (chargegate, baseline) runs through `side()`, so a part that is
 * missing or failing costs only its own figures: the row then says why instead of the run crashing.
 */
export class ScenarioContext {
  readonly figures: Figure[] = [];
  readonly errors: string[] = [];
  readonly recordedSettings: Record<string, unknown> = {};
  private readonly cleanups: Array<() => void> = [];
  private closed = false;

  constructor(
    readonly scenario: Scenario,
    readonly settings: BenchSettings,
    readonly processes: ProcessGroup,
    private readonly launcher: DaemonLauncher,
    private readonly keys: KeystoreTemplate,
    private readonly earlier: readonly ScenarioResult[],
    readonly log: (line: string) => void,
  ) {}

  /** Runs one side of the comparison; on failure records why and yields undefined. */
  async side<T>(name: string, fn: () => Promise<T>): Promise<T | undefined> {
    this.log(`  ${name}`);
    try {
      return await fn();
    } catch (err) {
      if (!this.closed) this.errors.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }

  figure(input: FigureInput): void {
    if (!this.closed) this.figures.push(makeFigure(this.scenario.id, input));
  }

  describe(settings: Record<string, unknown>): void {
    Object.assign(this.recordedSettings, settings);
  }

  startWorker<Api extends WorkerApi>(module: string, name?: string): Promise<WorkerHandle<Api>> {
    return this.processes.startWorker<Api>(module, name);
  }

  /**
   * A fresh data dir and config for a daemon, removed when the scenario ends. It holds the run's keystore unless
   * `newKeys`: then the daemon generates its own at start, as on a new gateway.
   */
  tempSite(options: { newKeys?: boolean } = {}): TempSite {
    const site = tempSite();
    this.cleanups.push(() => site.cleanup());
    if (!options.newKeys) this.keys.copyInto(site.dataDir);
    return site;
  }

  /** Starts chargegate on `site` (a fresh one unless given: a restart keeps its data dir). */
  startChargegate(config: Record<string, unknown>, site: TempSite = this.tempSite()): Promise<ChargegateProcess> {
    return startChargegate(this.launcher, this.processes, config, site);
  }

  /** Runs fn against a running chargegate, then checks the daemon survived it and stops it. */
  async withChargegate<T>(
    config: Record<string, unknown>,
    fn: (daemon: ChargegateProcess) => Promise<T>,
    site?: TempSite,
  ): Promise<T> {
    const daemon = await this.startChargegate(config, site);
    const result = await fn(daemon);
    daemon.assertAlive();
    await daemon.stop();
    return result;
  }

  /** A figure an earlier scenario of this run measured (scenario 5 is judged against scenario 1's rate). */
  earlierFigure(scenarioId: number, name: string): Figure | undefined {
    return this.earlier.find((s) => s.id === scenarioId)?.figures.find((f) => f.name === name);
  }

  /** Ends the scenario: late results of a timed-out scenario are ignored, its processes and files go. */
  async close(): Promise<void> {
    this.closed = true;
    await this.processes.stopAll();
    for (const fn of this.cleanups.splice(0)) fn();
  }
}
