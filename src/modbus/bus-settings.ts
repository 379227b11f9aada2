import { modbusBusKey, type ModbusConnectionConfig } from '../config/index.js';

/**
 * How to open a bus: host and port, or the device and its serial settings (unit id and timeout go with each request).
 */
export type BusTransport =
  | { type: 'tcp' | 'rtuovertcp'; host: string; port: number }
  | {
      type: 'rtu';
      device: string;
      baudRate: number;
      parity: 'none' | 'even' | 'odd';
      dataBits: 7 | 8;
      stopBits: 1 | 2;
    };

/** One physical bus or socket: how to open it and how to pace and recover requests on it. */
export interface BusSettings {
  key: string;
  connection: BusTransport;
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
      connection: known?.connection ?? transportOf(connection),
      interRequestDelayMs: Math.max(known?.interRequestDelayMs ?? 0, connection.interRequestDelayMs),
      unitChangeDelayMs: Math.max(known?.unitChangeDelayMs ?? 0, connection.unitChangeDelayMs),
      reconnectMinMs: Math.max(known?.reconnectMinMs ?? 0, connection.reconnectMinMs),
      reconnectMaxMs: Math.max(known?.reconnectMaxMs ?? 0, connection.reconnectMaxMs),
    });
  }
  return buses;
}

function transportOf(c: ModbusConnectionConfig): BusTransport {
  return c.type === 'rtu'
    ? {
        type: c.type,
        device: c.device,
        baudRate: c.baudRate,
        parity: c.parity,
        dataBits: c.dataBits,
        stopBits: c.stopBits,
      }
    : { type: c.type, host: c.host, port: c.port };
}
