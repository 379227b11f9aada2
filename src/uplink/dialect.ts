import type { UpstreamDecision } from '../authorization/index.js';
import type { QueuedMessage } from './queue.js';

/** A connector's last status as the station registry keeps it: in 1.6's words, whatever the station speaks. */
export interface ReportedStatus {
  connectorId: number;
  status: string;
  errorCode: string;
}

/**
 * What a station's link says in the station's own OCPP version (docs/design/uplink.md#uplink-what-the-csms-sees): v16/dialect.ts and
 * v201/dialect.ts. The rest of a link (boot, replay in order, retries, relaying the CSMS's calls) is the same for both.
 */
export interface LinkDialect {
  /** The WebSocket subprotocol the link offers the CSMS: the station's. */
  readonly protocol: string;
  /** The Authorize request for a token of the decision chain. */
  authorize(idTag: string, idTokenType: string | undefined): object;
  /** The CSMS's answer to it, as the decision chain takes it. */
  decision(answer: unknown): UpstreamDecision;
  /** The StatusNotifications that tell the CSMS each connector's current status after a replay. */
  statusNotifications(reported: readonly ReportedStatus[], now: Date): object[];
  /** A queued message as the CSMS gets it; undefined when it is dropped (its transaction's start was). */
  outgoing(message: QueuedMessage): Record<string, unknown> | undefined;
  /** The CSMS answered a queued message. */
  answered(message: QueuedMessage, answer: unknown): void;
  /** The CSMS refused a queued message every time: it is dropped, and with a start its transaction's later messages. */
  refused(message: QueuedMessage): void;
  /**
   * A call from the CSMS with the transaction ids it names as the station knows them; undefined when it names one
   * the station does not have.
   */
  incoming(action: string, params: Record<string, unknown>): Record<string, unknown> | undefined;
}
