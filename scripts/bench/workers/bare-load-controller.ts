import modbusSerial from 'modbus-serial';
import { RPCServer, type RPCClient } from 'ocpp-rpc';
import { decodeRegister, METER_MODELS, planReads, REGISTER_WORDS } from '../../../src/modbus/index.js';
import { equalShareA } from '../load-site.js';
import { serveWorker } from '../worker-protocol.js';

// modbus-serial is CommonJS: its class is module.exports, also exposed as `.default`.
const ModbusRTU = modbusSerial.default;

/**
 * Scenario 8's baseline: the least a load controller does. A bare ocpp-rpc server in strict mode, which the same
 * stations connect to and which answers their boot and transactions with constants, and a bare modbus-serial client
 * reading the grid meter's phase currents at the same interval; when the equal share of what main leaves changes, it
 * sends every charging station a TxProfile with it at once. No nesting, no fairness, no damping, nothing stored.
 */
let server: RPCServer | undefined;
/** Each charging station's transaction, as this server numbered it. */
const charging = new Map<RPCClient, number>();
let meter: InstanceType<typeof ModbusRTU> | undefined;
let timer: NodeJS.Timeout | undefined;

export const bareLoadControllerApi = {
  async listen(payload: { port: number }): Promise<void> {
    server = new RPCServer({ protocols: ['ocpp1.6'], strictMode: true });
    let nextTransactionId = 1;
    server.on('client', (client) => {
      client.handle('BootNotification', () => ({
        status: 'Accepted',
        interval: 300,
        currentTime: new Date().toISOString(),
      }));
      client.handle('StatusNotification', () => ({}));
      client.handle('MeterValues', () => ({}));
      client.handle('StartTransaction', () => {
        const transactionId = nextTransactionId++;
        charging.set(client, transactionId);
        return { transactionId, idTagInfo: { status: 'Accepted' } };
      });
      client.on('close', () => charging.delete(client));
    });
    await server.listen(payload.port, '127.0.0.1');
  },

  /** Starts polling the meter and sending shares. */
  async control(payload: { meterPort: number; pollIntervalMs: number; connectors: number }): Promise<void> {
    const map = METER_MODELS.sdm630;
    const [read] = planReads(map, map.currentA);
    if (!read) throw new Error('no read for the phase currents');
    const client = new ModbusRTU();
    await client.connectTCP('127.0.0.1', { port: payload.meterPort });
    client.setID(1);
    client.setTimeout(1000);
    meter = client;
    let sentA: number | undefined;
    timer = setInterval(() => {
      void (async () => {
        const { data } = await (read.functionCode === 4
          ? client.readInputRegisters(read.address, read.count)
          : client.readHoldingRegisters(read.address, read.count));
        const peakA = Math.max(
          ...map.currentA.map((spec) => {
            const at = spec.address - read.address;
            return decodeRegister(spec, data.slice(at, at + REGISTER_WORDS[spec.type]));
          }),
        );
        const shareA = equalShareA(peakA, payload.connectors);
        if (shareA === sentA) return;
        sentA = shareA;
        await Promise.all(
          [...charging].map(([station, transactionId]) =>
            station.call('SetChargingProfile', {
              connectorId: 1,
              csChargingProfiles: {
                chargingProfileId: 1001,
                transactionId,
                stackLevel: 0,
                chargingProfilePurpose: 'TxProfile',
                chargingProfileKind: 'Relative',
                chargingSchedule: {
                  chargingRateUnit: 'A',
                  chargingSchedulePeriod: [{ startPeriod: 0, limit: shareA }],
                },
              },
            }),
          ),
        );
      })().catch(() => undefined);
    }, payload.pollIntervalMs);
  },

  async close(): Promise<void> {
    clearInterval(timer);
    meter?.close(() => undefined);
    await server?.close({ force: true });
  },
};

export type BareLoadControllerApi = typeof bareLoadControllerApi;

serveWorker(bareLoadControllerApi);
