import type { Ocpp201Actions } from '../ocpp/index.js';

type ReportPart = Ocpp201Actions['NotifyReport'][0];
type ReportData = NonNullable<ReportPart['reportData']>[number];

/** A 2.0.1 station's variables are kept up to this many per report: a station cannot grow the daemon's memory. */
export const REPORT_VARIABLES_KEPT = 2_000;

/** One variable of a base report, named as `config get` and `config set` take it. */
export interface ReportedVariable {
  key: string;
  value?: string;
  readonly: boolean;
}

/** The base report chargegate last asked a 2.0.1 station for, as far as its NotifyReport parts have come. */
export interface BaseReport {
  requestId: number;
  requestedAt: string;
  /** When the station generated its last part; null until the first arrives. */
  generatedAt: string | null;
  parts: number;
  /** The station sent its last part (tbc false). */
  complete: boolean;
  /** Variables beyond REPORT_VARIABLES_KEPT were dropped. */
  truncated: boolean;
  variables: ReportedVariable[];
}

/** `Component.Variable`, or `Component[evse].Variable` for a component of one EVSE (contract 11.1). */
export function variableKey(component: { name: string; evse?: { id: number } }, variable: { name: string }): string {
  return `${component.name}${component.evse ? `[${component.evse.id}]` : ''}.${variable.name}`;
}

/**
 * The base reports asked of 2.0.1 stations (GetBaseReport FullInventory) and the NotifyReport parts that answer
 * them, in memory, one per station: parts of reports chargegate did not ask for (a CSMS's, relayed by the uplink) are
 * not kept.
 */
export class BaseReports {
  private readonly reports = new Map<string, BaseReport>();

  /** A new request: the station's previous report gives way once it is asked for another. */
  asked(stationId: string, requestId: number, at: Date): void {
    this.reports.set(stationId, {
      requestId,
      requestedAt: at.toISOString(),
      generatedAt: null,
      parts: 0,
      complete: false,
      truncated: false,
      variables: [],
    });
  }

  received(stationId: string, part: ReportPart): void {
    const report = this.reports.get(stationId);
    if (!report || report.requestId !== part.requestId) return;
    report.parts += 1;
    report.generatedAt = part.generatedAt;
    report.complete = part.tbc !== true;
    for (const data of part.reportData ?? []) {
      if (report.variables.length >= REPORT_VARIABLES_KEPT) {
        report.truncated = true;
        break;
      }
      report.variables.push(reportedVariable(data));
    }
  }

  of(stationId: string): BaseReport | undefined {
    return this.reports.get(stationId);
  }
}

function reportedVariable(data: ReportData): ReportedVariable {
  const actual = data.variableAttribute.find((a) => (a.type ?? 'Actual') === 'Actual') ?? data.variableAttribute[0];
  return {
    key: variableKey(data.component, data.variable),
    ...(actual.value !== undefined && { value: actual.value }),
    readonly: actual.mutability === 'ReadOnly',
  };
}
