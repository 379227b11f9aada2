import { externalTool } from '../support/meter-simulator.js';
import { DEBIAN_PYTHON, PymodbusMeter } from '../support/pymodbus-meter.js';
import { onPtyPair, sessionScenarios } from './session-scenarios.js';

sessionScenarios({
  name: "Debian's python3-pymodbus over Modbus RTU on a socat pseudo-terminal pair",
  available: externalTool('socat') && externalTool(DEBIAN_PYTHON, ['-c', 'import pymodbus']),
  start: (dir, units) => onPtyPair(dir, (device) => PymodbusMeter.start({ rtu: device }, units)),
});
