import type { RpcServerClient } from './rpc.js';

/** What chargegate remembers about a station's connection from its WebSocket upgrade. */
export interface StationSession {
  stationId: string;
  /** The admission the station had when it connected; a change (pairing, blocking) closes the socket. */
  admission: 'known' | 'unknown' | 'rejected';
  /** The password hash the station proved it knows (profiles 1 and 2); a new pairing invalidates it. */
  passwordHash: string | null;
}

export type StationClient = RpcServerClient<StationSession>;

/** The live connection of each station; a newer connection with the same identity replaces the older one. */
export class StationConnections {
  private readonly byStation = new Map<string, StationClient>();

  /** Registers the client and returns the connection it replaces, if any (the caller closes it). */
  attach(client: StationClient): StationClient | undefined {
    const previous = this.byStation.get(client.session.stationId);
    this.byStation.set(client.session.stationId, client);
    return previous === client ? undefined : previous;
  }

  /** Forgets the client if it is still the current one; false when a newer connection already replaced it. */
  detach(client: StationClient): boolean {
    if (this.byStation.get(client.session.stationId) !== client) return false;
    this.byStation.delete(client.session.stationId);
    return true;
  }

  connectionOf(stationId: string): StationClient | undefined {
    return this.byStation.get(stationId);
  }

  all(): StationClient[] {
    return [...this.byStation.values()];
  }

  get size(): number {
    return this.byStation.size;
  }
}
