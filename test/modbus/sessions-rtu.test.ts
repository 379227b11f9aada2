import { METER_MODELS } from '../../src/modbus/index.js';
import { externalTool, MeterSimulator } from '../support/meter-simulator.js';
import { onPtyPair, sessionScenarios } from './session-scenarios.js';

sessionScenarios({
  name: 'our simulator over Modbus RTU on a socat pseudo-terminal pair (modbus-serial ServerSerial)',
  available: externalTool('socat'),
  start: (dir, units) =>
    onPtyPair(dir, (device) =>
      MeterSimulator.rtu({ device, units: Object.fromEntries(units.map((u) => [u, METER_MODELS.sdm630])) }),
    ),
});
