export { worstLevel, type HealthLevel, type HealthSource } from './levels.js';
