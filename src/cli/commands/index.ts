import type { Command } from 'commander';
import { registerCheckConfig } from './check-config.js';
import { registerRun } from './run.js';

/** Every command group registers itself here; one file per group. */
export function registerCommands(program: Command): void {
  registerRun(program);
  registerCheckConfig(program);
}
