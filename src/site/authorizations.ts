import type { ConnectorRef } from './connectors.js';
import type { AuthorizationStatus, AuthorizePayload } from './events.js';
import type { SiteContext } from './site-context.js';
import type { StationRegistry } from './station-registry.js';

/** Authorize decisions as partners see them (interface 2.3): one Authorize event each. */
export class Authorizations {
  constructor(
    private readonly ctx: SiteContext,
    private readonly stations: StationRegistry,
  ) {}

  /** Records an Authorize decision. connectorId is given when a transaction is in progress. */
  record(stationId: string, idTag: string, status: AuthorizationStatus, connectorId?: number): void {
    this.ctx.commit(() => this.write(stationId, idTag, status, connectorId));
  }

  /**
   * Emits the event inside the caller's commit; `at` when the caller already knows the connector (a StartTransaction).
   */
  write(stationId: string, idTag: string, status: AuthorizationStatus, connectorId?: number, at?: ConnectorRef): void {
    const { directory } = this.ctx;
    const chargePoints = directory.chargePointsOf(stationId);
    const chargePointId =
      at?.chargePointId ??
      (connectorId !== undefined
        ? directory.chargePointOf(stationId, connectorId)
        : chargePoints.length === 1
          ? chargePoints[0]
          : undefined);
    const payload: AuthorizePayload = {
      stationId,
      idTag,
      status,
      ...(chargePointId !== undefined && { chargePointId }),
      ...(connectorId !== undefined && { connectorId }),
    };
    this.ctx.emit(
      { eventType: 'Authorize', siteId: at?.siteId ?? this.stations.siteOf(stationId), payload },
      this.ctx.now(),
    );
  }
}
