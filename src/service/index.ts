export { connectServiceManager, type ServiceManager } from './service-manager.js';
export { installProcessSignals } from './process-signals.js';
export { planReload } from './reload-scope.js';
export { watchdogIntervalMs } from './watchdog.js';
