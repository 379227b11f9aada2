import { externalTool } from '../support/meter-simulator.js';
import { DEBIAN_PYTHON, PymodbusMeter } from '../support/pymodbus-meter.js';
import { behindDeviceServer, sessionScenarios } from './session-scenarios.js';

sessionScenarios({
  name: "Debian's python3-pymodbus over Modbus RTU behind a socat serial device server (rtuovertcp)",
  available: externalTool('socat') && externalTool(DEBIAN_PYTHON, ['-c', 'import pymodbus']),
  start: (dir, units) => behindDeviceServer(dir, (device) => PymodbusMeter.start({ rtu: device }, units)),
});
