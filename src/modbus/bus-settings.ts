import { modbusBusKey, type ModbusConnectionConfig } from '../config/index.js';

/** One physical bus or socket: how to open it and how to pace and recover requests on it. */
export interface BusSettings {
  key: string;
  /** The transport (host/port or device and serial settings); unit id and timeout travel with each request. */
  connection: ModbusConnectionConfig;
  interRequestDelayMs: number;
  unitChangeDelayMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
}

/**
 * The settings of each bus the connections use, by bus key. Meters sharing a bus may ask for different pacing:
 * the most cautious value of each wins (the config refuses conflicting serial settings).
 */
export function busSettingsOf(connections: readonly ModbusConnectionConfig[]): Map<string, BusSettings> {
  const buses = new Map<string, BusSettings>();
  for (const connection of connections) {
    const key = modbusBusKey(connection);
    const known = buses.get(key);
    buses.set(key, {
      key,
      connection: known?.connection ?? connection,
      interRequestDelayMs: Math.max(known?.interRequestDelayMs ?? 0, connection.interRequestDelayMs),
      unitChangeDelayMs: Math.max(known?.unitChangeDelayMs ?? 0, connection.unitChangeDelayMs),
      reconnectMinMs: Math.max(known?.reconnectMinMs ?? 0, connection.reconnectMinMs),
      reconnectMaxMs: Math.max(known?.reconnectMaxMs ?? 0, connection.reconnectMaxMs),
    });
  }
  return buses;
}
