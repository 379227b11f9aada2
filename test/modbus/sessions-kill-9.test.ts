import { killMidSessionScenario, OUR_SIMULATOR_RTU, OUR_SIMULATOR_TCP } from './session-scenarios.js';

killMidSessionScenario(OUR_SIMULATOR_TCP);
killMidSessionScenario(OUR_SIMULATOR_RTU);
