export { connectServiceManager, type ServiceManager } from './service-manager.js';
export { installProcessSignals } from './process-signals.js';
export { reloadConfig } from './config-reload.js';
export { planReload } from './reload-scope.js';
export { watchdogIntervalMs } from './watchdog.js';
