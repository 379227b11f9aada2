import { OUR_SIMULATOR_RTU, sessionScenarios } from './session-scenarios.js';

sessionScenarios(OUR_SIMULATOR_RTU);
