import type { Logger } from './logger.js';

/** A warning function that logs a message at most once per interval and counts the repeats in between. */
export interface SummarisedWarn {
  (fields: object, message: string): void;
  /** Logs what was counted and not yet logged, in one line, and stops the timers (a connection closing, say). */
  flush(): void;
}

/** How often one message is logged in full before its repeats are only counted, and per how long. */
export interface WarningBudget {
  perInterval: number;
  intervalMs: number;
}

/**
 * One peer that repeats the same mistake (a hostile or broken station) would otherwise write a warning per call,
 * megabytes a minute onto a gateway's flash. The first `perInterval` of a message in an interval are logged; the
 * rest are counted, and the next line of that message says how many were not (`repeated`): the next warning after
 * the interval, or at the interval's end a line with the count alone.
 */
export function summarisedWarn(logger: Logger, budget: WarningBudget, now: () => number = Date.now): SummarisedWarn {
  const seen = new Map<string, { since: number; logged: number; repeated: number }>();
  // A count not yet logged is logged when its interval ends, even if the peer stops repeating (it may stay connected
  // for days); one timer per message with a count, none otherwise.
  const reports = new Map<string, NodeJS.Timeout>();
  const report = (message: string): void => {
    reports.delete(message);
    const state = seen.get(message);
    if (!state?.repeated) return;
    logger.warn({ repeated: state.repeated }, message);
    state.repeated = 0;
  };
  const warn = (fields: object, message: string): void => {
    let state = seen.get(message);
    if (!state || now() - state.since >= budget.intervalMs) {
      state = { since: now(), logged: 0, repeated: state?.repeated ?? 0 };
      seen.set(message, state);
    }
    if (state.logged >= budget.perInterval) {
      state.repeated += 1;
      if (!reports.has(message)) {
        const timer = setTimeout(() => report(message), state.since + budget.intervalMs - now());
        timer.unref();
        reports.set(message, timer);
      }
      return;
    }
    logger.warn(state.repeated > 0 ? { ...fields, repeated: state.repeated } : fields, message);
    state.logged += 1;
    state.repeated = 0;
  };
  warn.flush = (): void => {
    for (const timer of reports.values()) clearTimeout(timer);
    reports.clear();
    const repeated = Object.fromEntries(
      [...seen].filter(([, s]) => s.repeated > 0).map(([message, s]) => [message, s.repeated]),
    );
    seen.clear();
    if (Object.keys(repeated).length > 0) logger.warn({ repeated }, 'repeated warnings, summarised');
  };
  return warn;
}
