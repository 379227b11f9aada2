import type { Command } from 'commander';
import {
  ConfigError,
  isLoopbackHost,
  isWildcardHost,
  loadConfig,
  resolveConfigPath,
  stationFacingUrlProblem,
  unreadableFiles,
  type Config,
} from '../../config/index.js';
import { KeystoreError, keystoreEncrypted } from '../../keystore/index.js';
import { CliError, EXIT_USAGE, output, type GlobalOptions } from '../context.js';
import { socketPathProblem } from '../local-socket.js';

export function registerCheckConfig(program: Command): void {
  program
    .command('check-config')
    .description(
      'validate the config file: exit 0 when usable (with warnings about risky settings), 2 with the key path of every problem',
    )
    .action((_options, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const json = globals.json === true;
      const configPath = resolveConfigPath(globals.config);
      let config: Config;
      try {
        config = loadConfig(configPath);
        // What the daemon would fail on at start: better told now, by the check systemctl reload runs first.
        const unusable = unreadableFiles(config);
        const socketProblem = socketPathProblem(config.dataDir);
        if (socketProblem) unusable.push(socketProblem);
        if (unusable.length > 0) throw new ConfigError(configPath, unusable);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        if (!json) throw new CliError(err.message, EXIT_USAGE);
        // With --json the problems are the document (one per entry), not a single {error} line.
        output(true, { ok: false, file: configPath, problems: err.problems }, () => '');
        process.stderr.write(`chargegate: ${err.message}\n`);
        process.exitCode = EXIT_USAGE;
        return;
      }
      const warnings = configWarnings(config);
      output(json, { ok: true, file: configPath, sites: config.sites.map((s) => s.id), warnings }, () =>
        [
          `${configPath}: ok (${config.sites.length} site${config.sites.length === 1 ? '' : 's'})`,
          ...warnings.map((w) => `warning: ${w}`),
        ].join('\n'),
      );
    });
}

/**
 * Settings that work but put partners or keys at risk: told, not refused (exit 0). Exported, with `env`, for the
 * tests that check the warnings of many configs without a CLI process each.
 */
export function configWarnings(config: Config, env: NodeJS.ProcessEnv = process.env): string[] {
  const warnings: string[] = [];
  const issuerHost = new URL(config.http.issuer).hostname;
  if (isWildcardHost(issuerHost)) {
    warnings.push(
      `http.issuer: ${config.http.issuer} names every interface, not this gateway: tokens carry it as "iss" and partners fetch the JWKS from it; set http.issuer to the gateway's name or LAN address`,
    );
  }
  const unreachable = stationFacingUrlProblem(config);
  if (unreachable) warnings.push(unreachable);
  const exposed = [
    ['http.host', config.http.host],
    ['ocpp.host', config.ocpp.host],
  ].filter(([, host]) => !isLoopbackHost(host!));
  let encrypted: boolean;
  try {
    encrypted = keystoreEncrypted(config, env);
  } catch (err) {
    // The daemon would refuse to start on it; the config itself is fine.
    if (!(err instanceof KeystoreError)) throw err;
    return [...warnings, `keystore: ${err.message}`];
  }
  if (exposed.length > 0 && !encrypted) {
    warnings.push(
      `keystore: the signing keys are stored unencrypted while ${exposed.map(([key, host]) => `${key} is ${host}`).join(' and ')}; ` +
        `give a passphrase in $${config.keystore.passphraseEnv} or the systemd credential ${config.keystore.passphraseCredential} (docs/install/service.md#install-as-a-service)`,
    );
  }
  return warnings;
}
