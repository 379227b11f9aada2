/**
 * The load controller's plain data (docs/configuration/circuits.md#circuits-load-management): what it is told about the site's circuits and connectors, what
 * one step observes, what it decides and what it remembers between steps. Its own types, named after the config's
 * keys, so that the core depends on no config loader and no protocol.
 */

export type Phase = 'L1' | 'L2' | 'L3';

export const PHASES: readonly Phase[] = ['L1', 'L2', 'L3'];

export type PhaseCurrents = Readonly<Record<Phase, number>>;

/** One circuit of the tree. The config schema guarantees known parents and no cycles. */
export interface CircuitFacts {
  id: string;
  parent?: string;
  /** Per phase. */
  maxCurrentA: number;
  maxPowerW?: number;
  /** Per charging connector when chargegate cannot know; inherited by child circuits unless set (default 6). */
  failsafeCurrentA?: number;
  /** Whether a `role: circuit` meter sees everything on this circuit. */
  metered: boolean;
}

/** A connector on a circuit: single-phase connectors load only their phase, three-phase ones all three. */
export type ConnectorFacts = {
  /** Its connector key, `<chargePointId>/<connectorId>` (CONTRIBUTING.md#working-on-chargegate, words): what the decisions name it by. */
  id: string;
  circuitId: string;
  maxCurrentA: number;
  /** False for a Modbus-only charger or a station that refused a profile: it draws what it likes, up to maxCurrentA. */
  controllable: boolean;
} & ({ phases: 3 } | { phases: 1; phase: Phase });

export interface LoadSettings {
  minCurrentA: number;
  raiseAfterS: number;
}

export interface LoadSite {
  circuits: readonly CircuitFacts[];
  connectors: readonly ConnectorFacts[];
  settings: LoadSettings;
}

/** What a circuit meter measured. */
export interface CircuitReading {
  circuitId: string;
  currentA: PhaseCurrents;
}

/** A connector with an open transaction. */
export interface Session {
  connectorKey: string;
  /**
   * What it draws per phase, when the station reports it; a three-phase connector gives its least loaded phase,
   * since subtracting more than it draws would hide other load. Unknown counts as 0 for the same reason.
   */
  drawnA?: number;
}

/** What one step sees. A metered circuit without a reading has lost its meter. */
export interface Observation {
  atMs: number;
  readings: readonly CircuitReading[];
  sessions: readonly Session[];
}

export type ConnectorState = 'sharing' | 'waiting' | 'failsafe' | 'uncontrolled';

export interface ConnectorDecision {
  connectorKey: string;
  state: ConnectorState;
  /**
   * Its fair share now (failsafe: the fail-safe; uncontrolled: its maxCurrentA), which allowedA follows: down at once,
   * up after raiseAfterS.
   */
  shareA: number;
  /** What the connector may draw per phase from now on. */
  allowedA: number;
  /** The limit to send now; absent when allowedA stays (a change inside the dead band, a raise still waiting). */
  sendA?: number;
}

export interface CircuitLoad {
  circuitId: string;
  meter: 'none' | 'ok' | 'lost';
  /** What the meter measured; absent without a working meter. */
  measuredA?: PhaseCurrents;
  /**
   * What the managed connectors do not draw: measured minus their draw, or (without a meter) uncontrolled connectors at
   * their maximum.
   */
  otherA: PhaseCurrents;
  /**
   * The limit minus the other load and the fail-safe allowances on the most loaded phase: what the sharing connectors
   * share.
   */
  headroomA: number;
}

/**
 * Where a charging connector stands in the rotation: holding a share since when (and its current turn since when), or
 * waiting since when.
 */
export type QueuePlace = { served: true; sinceMs: number; turnSinceMs: number } | { served: false; sinceMs: number };

/** What the controller remembers about a charging connector between steps. */
export interface ConnectorMemory {
  allowedA: number;
  place: QueuePlace;
  /** A raise the shares show, not yet made: since when, and the lowest share seen since (what held all along). */
  raise?: { sinceMs: number; toA: number };
}

export interface ControllerState {
  connectors: Readonly<Record<string, ConnectorMemory>>;
  /** Charging connectors whose car's draw was not known at the step: the first reading with it restarts raises. */
  drawUnknown: readonly string[];
}

export interface ControllerStep {
  connectors: ConnectorDecision[];
  circuits: CircuitLoad[];
  state: ControllerState;
}
