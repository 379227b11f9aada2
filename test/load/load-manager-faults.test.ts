import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { parseConfig, type Config } from '../../src/config/index.js';
import { LoadManager, type ChargingLimits, type OpenTransaction } from '../../src/load/index.js';
import type { Logger } from '../../src/log/index.js';
import { capturedLogger } from '../support/captured-log.js';
import { baseConfig } from '../support/temp-site.js';
import { ManualClock } from './manual-clock.js';
import { openTransactionOn } from './open-transactions.js';

/** One station on a 16 A circuit, with these load management settings. */
const oneStation = (loadManagement: object = {}): Config =>
  parseConfig(
    JSON.stringify({
      ...baseConfig('/tmp/unused'),
      sites: [
        {
          id: 's1',
          stations: [{ id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1] }] }],
          circuits: [{ id: 'main', maxCurrentA: 16, chargePoints: ['CP001-A'] }],
        },
      ],
      loadManagement,
    }),
  );
const config = oneStation();

/** The shell on no circuit meter, with these open transactions, stopped after the test; the system clock unless given. */
function shellForTest(options: {
  config: Config;
  limits: ChargingLimits;
  open: () => OpenTransaction[];
  logger: Logger;
  stepIntervalMs: number;
  clock?: ManualClock;
}): LoadManager {
  const { open, ...rest } = options;
  const load = new LoadManager({
    ...rest,
    meters: { onCircuitReading: () => () => undefined, circuitReadings: () => [] },
    transactions: { open, onOpenedOrClosed: () => () => undefined, reportedDraw: () => undefined },
  });
  onTestFinished(() => load.stop());
  return load;
}

const ONE_OPEN = (): OpenTransaction[] => [openTransactionOn(1, 'CP001')];

describe('the load controller shell, when what it reads fails', () => {
  it('logs a step that could not read the open transactions and keeps stepping: the daemon is not taken down', async () => {
    const { logger, lines } = capturedLogger();
    let failing = true;
    const limits: ChargingLimits = {
      setFailsafe: () => Promise.resolve('accepted'),
      requestDrawReport: () => Promise.resolve('accepted'),
      setTransactionLimit: () => Promise.resolve('accepted'),
    };
    const clock = new ManualClock();
    shellForTest({
      config,
      limits,
      open: () => {
        if (failing) throw new Error('SQLITE_IOERR: disk I/O error');
        return [];
      },
      logger,
      stepIntervalMs: 10,
      clock,
    });
    // Logged once until a step succeeds again, not once per step.
    await clock.advance(50);
    expect(lines.filter((l) => l.msg === 'load step failed; the next one tries again')).toHaveLength(1);
    failing = false;
    await clock.advance(10);
    expect(lines.filter((l) => l.msg === 'load steps run again')).toHaveLength(1);
  });

  it('logs a limit the port failed to send (not a station answer) and sends it again: no unhandled rejection', async () => {
    const { logger, lines } = capturedLogger();
    let broken = true;
    const sent: number[] = [];
    let tries = 0;
    const limits: ChargingLimits = {
      setFailsafe: () => Promise.reject(new Error('our own profile failed the schema')),
      requestDrawReport: () => Promise.resolve('accepted'),
      setTransactionLimit: (_stationId, limit) => {
        tries += 1;
        if (broken) return Promise.reject(new Error('our own profile failed the schema'));
        sent.push(limit.currentA);
        return Promise.resolve('accepted');
      },
    };
    const clock = new ManualClock();
    const load = shellForTest({ config, limits, open: ONE_OPEN, logger, stepIntervalMs: 10, clock });
    load.booted('CP001');
    await clock.advance(30);
    expect(tries).toBeGreaterThan(2);
    // Logged once per profile until one is sent, not once per try; the fail-safe's failure too.
    const notSent = lines.filter((l) => l.msg === 'charging limit not sent: will try again');
    expect(notSent.map((l) => l.profile).sort()).toEqual(['TxDefaultProfile', 'TxProfile']);
    broken = false;
    await clock.advance(10);
    expect(sent).toHaveLength(1);
  });

  it('raises after raiseAfterS though the wall clock is set back meanwhile; validTo still reads the wall clock', async () => {
    const { logger } = capturedLogger();
    const twoStations = parseConfig(
      JSON.stringify({
        ...baseConfig('/tmp/unused'),
        loadManagement: { raiseAfterS: 1 },
        sites: [
          {
            id: 's1',
            stations: [
              { id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1] }] },
              { id: 'CP002', chargePoints: [{ id: 'CP002-A', connectors: [1] }] },
            ],
            circuits: [{ id: 'main', maxCurrentA: 16, chargePoints: ['CP001-A', 'CP002-A'] }],
          },
        ],
      }),
    );
    const sent: Array<{ stationId: string; currentA: number; validTo: Date }> = [];
    let open = [openTransactionOn(1, 'CP001'), openTransactionOn(2, 'CP002')];
    shellForTest({
      config: twoStations,
      limits: {
        setFailsafe: () => Promise.resolve('accepted'),
        requestDrawReport: () => Promise.resolve('accepted'),
        setTransactionLimit: (stationId, limit) => {
          sent.push({ stationId, currentA: limit.currentA, validTo: limit.validTo });
          return Promise.resolve('accepted');
        },
      },
      open: () => open,
      logger,
      stepIntervalMs: 20,
    });
    const lastFor = (stationId: string) => sent.filter((s) => s.stationId === stationId).at(-1)?.currentA;
    // Each starts on the fail-safe and is raised to its share once it held raiseAfterS.
    await expect.poll(() => lastFor('CP001'), { timeout: 5000 }).toBe(8);
    // The other car leaves; while its share waits to be raised the clock is set back an hour (an NTP correction, a dead RTC battery fixed).
    open = open.slice(0, 1);
    // The raise is pending (raiseAfterS is 1 s) when the clock goes back.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lastFor('CP001')).toBe(8);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 3_600_000 });
    onTestFinished(() => void vi.useRealTimers());
    await expect.poll(() => lastFor('CP001'), { timeout: 5000 }).toBe(16);
    expect(sent.at(-1)!.validTo.getTime()).toBeGreaterThan(Date.now());
    expect(sent.at(-1)!.validTo.getTime()).toBeLessThanOrEqual(Date.now() + 300_000);
  });
});

describe('the load controller shell, renewing', () => {
  it('renews a profile at half of the validity it was sent with, though a reload lengthened profileValidityS', async () => {
    const { logger } = capturedLogger();
    const withValidity = (profileValidityS: number) => oneStation({ raiseAfterS: 1, profileValidityS });
    const validTo: Date[] = [];
    const currentA: number[] = [];
    const clock = new ManualClock();
    const load = shellForTest({
      config: withValidity(1),
      limits: {
        setFailsafe: () => Promise.resolve('accepted'),
        requestDrawReport: () => Promise.resolve('accepted'),
        setTransactionLimit: (_stationId, limit) => {
          validTo.push(limit.validTo);
          currentA.push(limit.currentA);
          return Promise.resolve('accepted');
        },
      },
      open: ONE_OPEN,
      logger,
      stepIntervalMs: 20,
      clock,
    });
    // Raised to the whole circuit after raiseAfterS: nothing left to change but renewals.
    await clock.advance(1_100);
    expect(currentA.at(-1)).toBe(16);
    // The profile the station holds lapses a second from now; the reload must not make the next renewal wait an hour.
    load.reload(withValidity(7200));
    const sentBefore = validTo.length;
    await clock.advance(500);
    expect(validTo.length).toBeGreaterThan(sentBefore);
    expect(validTo.at(-1)!.getTime()).toBeGreaterThan(clock.wallMs() + 3_600_000);
  });
});

describe('the load controller shell, between a start and its answer', () => {
  it("sends a transaction's first limit only once the domain told its start: its station knows the id by then", () => {
    const { logger } = capturedLogger();
    const sent: number[] = [];
    let open: OpenTransaction[] = [];
    let reading = (): void => undefined;
    let told = (_transactionId: number): void => undefined;
    const load = new LoadManager({
      config,
      limits: {
        setFailsafe: () => Promise.resolve('accepted'),
        requestDrawReport: () => Promise.resolve('accepted'),
        setTransactionLimit: (_stationId, limit) => {
          sent.push(limit.transactionId);
          return Promise.resolve('accepted');
        },
      },
      meters: {
        onCircuitReading: (listener) => ((reading = listener), () => undefined),
        circuitReadings: () => [],
      },
      transactions: {
        open: () => open,
        onOpenedOrClosed: (listener) => ((told = listener), () => undefined),
        reportedDraw: () => undefined,
      },
      logger,
      stepIntervalMs: 60_000,
    });
    onTestFinished(() => load.stop());
    // The start is written (the daemon's own reads see it) but its answer waits for the commit; a step on a reading
    // in between counts it, and sends nothing yet.
    open = [openTransactionOn(7, 'CP001')];
    reading();
    expect(load.status().connectors).toMatchObject([{ state: 'sharing', transactionId: 7 }]);
    expect(sent).toEqual([]);
    told(7);
    expect(sent).toEqual([7]);
  });
});
