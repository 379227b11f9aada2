export { connectServiceManager, type ServiceManager, type ServiceManagerOptions } from './service-manager.js';
export { installProcessSignals, type ControlledDaemon, type ProcessSignalOptions } from './process-signals.js';
export { planReload, type ReloadPlan } from './reload-scope.js';
export { watchdogIntervalMs } from './watchdog.js';
