import { StationTimeoutError } from '../ocpp/index.js';
import { StationBusyError } from './errors.js';

/** Contract 11.1: operations waiting for one station besides the one running; one more is refused at once. */
export const OPERATIONS_WAITING = 16;

interface StationQueue {
  running: boolean;
  waiting: Array<() => void>;
}

/**
 * One installer's or operator's operation at a time per station, the others waiting in arrival order (at most
 * `waiting` of them, else StationBusyError). Each caller has its answer within `deadlineMs` of asking, waiting
 * included: past it, a waiting operation leaves the queue unsent and a running one is answered with
 * StationTimeoutError while the station's lane keeps its call until the station answers or ocpp.callTimeoutMs ends it.
 */
export class OperationQueues {
  private readonly queues = new Map<string, StationQueue>();

  constructor(private readonly options: { waiting: number; deadlineMs: () => number }) {}

  run<T>(stationId: string, action: string, operation: () => Promise<T>): Promise<T> {
    let queue = this.queues.get(stationId);
    if (!queue) this.queues.set(stationId, (queue = { running: false, waiting: [] }));
    const { waiting } = this.options;
    if (queue.running && queue.waiting.length >= waiting)
      return Promise.reject(new StationBusyError(stationId, waiting));
    const station = queue;
    const deadlineMs = this.options.deadlineMs();
    return new Promise<T>((resolve, reject) => {
      const turn = (): void => {
        station.running = true;
        operation()
          .then(resolve, reject)
          .finally(() => {
            clearTimeout(deadline);
            station.running = false;
            this.next(stationId, station);
          });
      };
      const deadline = setTimeout(() => {
        const at = station.waiting.indexOf(turn);
        if (at >= 0) station.waiting.splice(at, 1);
        reject(
          new StationTimeoutError(
            stationId,
            action,
            `station "${stationId}" did not answer ${action} within ${deadlineMs} ms of the request` +
              (at >= 0 ? ' (it was still waiting for the operations before it)' : ''),
          ),
        );
      }, deadlineMs);
      if (station.running) station.waiting.push(turn);
      else turn();
    });
  }

  /** How many operations wait for the station besides the one running. */
  waitingFor(stationId: string): number {
    return this.queues.get(stationId)?.waiting.length ?? 0;
  }

  /** Whether an operation is running on the station now. */
  runningOn(stationId: string): boolean {
    return this.queues.get(stationId)?.running === true;
  }

  private next(stationId: string, station: StationQueue): void {
    const turn = station.waiting.shift();
    if (turn) turn();
    else this.queues.delete(stationId);
  }
}
