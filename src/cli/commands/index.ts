import type { Command } from 'commander';
import { registerApp } from './app.js';
import { registerCheckConfig } from './check-config.js';
import { registerDeadletter } from './deadletter.js';
import { registerFirmware } from './firmware.js';
import { registerIdTag } from './idtag.js';
import { registerKeys } from './keys.js';
import { registerLoad } from './load.js';
import { registerMeter } from './meter.js';
import { registerRollback } from './rollback.js';
import { registerRun } from './run.js';
import { registerStation } from './station.js';
import { registerTransaction } from './transaction.js';
import { registerUpstream } from './upstream.js';
import { registerWebhook } from './webhook.js';

/** Every command group registers itself here; one file per group. */
export function registerCommands(program: Command): void {
  registerRun(program);
  registerCheckConfig(program);
  registerApp(program);
  registerKeys(program);
  registerStation(program);
  registerFirmware(program);
  registerMeter(program);
  registerLoad(program);
  registerIdTag(program);
  registerTransaction(program);
  registerUpstream(program);
  registerWebhook(program);
  registerDeadletter(program);
  registerRollback(program);
}
