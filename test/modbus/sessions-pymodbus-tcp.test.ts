import { externalTool } from '../support/meter-simulator.js';
import { DEBIAN_PYTHON, PymodbusMeter } from '../support/pymodbus-meter.js';
import { sessionScenarios } from './session-scenarios.js';

sessionScenarios({
  name: "Debian's python3-pymodbus over Modbus TCP",
  available: externalTool(DEBIAN_PYTHON, ['-c', 'import pymodbus']),
  async start(_dir, units) {
    const sim = await PymodbusMeter.start({ tcp: '127.0.0.1:0' }, units);
    return { meter: sim, connection: { type: 'tcp', host: '127.0.0.1', port: sim.port }, close: () => sim.close() };
  },
});
