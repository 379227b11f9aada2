import type { Command } from 'commander';
import { registerApp } from './app.js';
import { registerCheckConfig } from './check-config.js';
import { registerIdTag } from './idtag.js';
import { registerKeys } from './keys.js';
import { registerRun } from './run.js';
import { registerStation } from './station.js';

/** Every command group registers itself here; one file per group. */
export function registerCommands(program: Command): void {
  registerRun(program);
  registerCheckConfig(program);
  registerApp(program);
  registerKeys(program);
  registerStation(program);
  registerIdTag(program);
}
