import { METER_MODELS } from '../../src/modbus/index.js';
import { MeterSimulator } from '../support/meter-simulator.js';
import { sessionScenarios } from './session-scenarios.js';

sessionScenarios({
  name: 'our simulator over Modbus TCP (modbus-serial ServerTCP)',
  available: true,
  async start(_dir, units) {
    const sim = await MeterSimulator.tcp({ units: Object.fromEntries(units.map((u) => [u, METER_MODELS.sdm630])) });
    return { meter: sim, connection: { type: 'tcp', host: '127.0.0.1', port: sim.port }, close: () => sim.close() };
  },
});
