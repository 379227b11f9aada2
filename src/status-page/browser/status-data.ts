// The parts of status.json the page reads, declared after ../status-snapshot.ts (status.ts says why, not imported).
/* exported StatusSnapshot, PHASES */

type HealthLevel = 'ok' | 'warning' | 'critical';

interface StatusSnapshot {
  startedAt: string;
  version: string;
  company: string;
  sites: string[];
  health: HealthLevel;
  stations: StationStatus[];
  chargePoints: ChargePointView[];
  openTransactions: OpenTransactionStatus[];
  meters: MeterStatus[];
  load: LoadStatus | null;
  parts: Record<string, Record<string, unknown>>;
  generatedAt: string;
}

type Phase = 'L1' | 'L2' | 'L3';

const PHASES: Phase[] = ['L1', 'L2', 'L3'];

type PhaseCurrents = Record<Phase, number>;

interface LoadStatus {
  circuits: CircuitStatus[];
  connectors: ManagedConnector[];
}

interface CircuitStatus {
  circuitId: string;
  siteId: string;
  parent?: string;
  maxCurrentA: number;
  meterId?: string;
  meter: 'none' | 'ok' | 'lost';
  measuredA?: PhaseCurrents;
  otherA: PhaseCurrents;
  headroomA: number;
  allowedA: PhaseCurrents;
}

interface ManagedConnector {
  chargePointId: string;
  connectorId: number;
  stationId?: string;
  circuitId: string;
  state: string;
  allowedA?: number;
  drawnA?: number;
  transactionId?: number;
}

interface StationStatus {
  stationId: string;
  siteId: string | null;
  state: string;
  online: boolean;
  lastSeen: string | null;
  vendor: string | null;
  model: string | null;
  firmwareVersion: string | null;
  operation: { action: string; who: string; since: string } | null;
  /** A firmware rollout or log collection the station is part of. */
  longOperation: { kind: string; id: string; state: string } | null;
}

interface ChargePointView {
  chargePointId: string;
  stationId: string;
  siteId: string;
  connectors: Array<{ connectorId: number; status: string; errorCode: string; transactionId?: number }>;
}

interface OpenTransactionStatus {
  transactionId: number;
  stationId: string;
  chargePointId: string;
  connectorId: number;
  startedAt: string;
  meterStartKWh: number;
  source: string;
}

interface MeterStatus {
  meterId: string;
  chargePointId: string;
  connectorId: number;
  model: string;
  address: string;
  live: {
    status: HealthLevel;
    online: boolean;
    lastGoodReadingAt: string | null;
    energyKWh: number | null;
    currentA: number[];
    powerW: number | null;
    session: string;
    transactionId: number | null;
  } | null;
}

/** What a table cell or an element holds: an element, or anything shown as its text. */
