import { OUR_SIMULATOR_TCP, sessionScenarios } from './session-scenarios.js';

sessionScenarios(OUR_SIMULATOR_TCP);
