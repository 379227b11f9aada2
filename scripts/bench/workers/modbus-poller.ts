import modbusSerial from 'modbus-serial';
import { METER_MODELS, planReads } from '../../../src/modbus/index.js';
import { serveWorker } from '../worker-protocol.js';

// modbus-serial is CommonJS: its class is module.exports, also exposed as `.default`.
const ModbusRTU = modbusSerial.default;

/**
 * Scenario 7's baseline: modbus-serial clients reading the same requests chargegate's plan makes for an SDM630,
 * at the same interval, and doing nothing with the answers.
 */
const timers: NodeJS.Timeout[] = [];
const clients: Array<InstanceType<typeof ModbusRTU>> = [];
let answered = 0;

export const modbusPollerApi = {
  async start(payload: { ports: number[]; pollIntervalMs: number }): Promise<void> {
    const reads = planReads(METER_MODELS.sdm630);
    for (const port of payload.ports) {
      const client = new ModbusRTU();
      await client.connectTCP('127.0.0.1', { port });
      client.setID(1);
      client.setTimeout(1000);
      clients.push(client);
      timers.push(
        setInterval(() => {
          void (async () => {
            for (const read of reads) {
              await (read.functionCode === 4
                ? client.readInputRegisters(read.address, read.count)
                : client.readHoldingRegisters(read.address, read.count));
              answered += 1;
            }
          })().catch(() => undefined);
        }, payload.pollIntervalMs),
      );
    }
  },
  answered(): number {
    return answered;
  },
  stop(): void {
    for (const timer of timers.splice(0)) clearInterval(timer);
    for (const client of clients.splice(0)) client.close(() => undefined);
  },
};

export type ModbusPollerApi = typeof modbusPollerApi;

serveWorker(modbusPollerApi);
