import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

/** An installer reads the help of the command at hand: the options every command takes must be in it. */
describe('chargegate SUBCOMMAND --help', { timeout: 120_000 }, () => {
  it('lists --config and --json beside the command own options, and exits 0', async () => {
    const commands = [
      ['station', 'pair'],
      ['app', 'rotate-secret'],
      ['deadletter', 'show'],
      ['meter', 'status'],
      ['load', 'status'],
      ['keys', 'rotate'],
      ['check-config'],
    ];
    const results = await Promise.all(commands.map((command) => runCli([...command, '--help'])));
    for (const [i, { code, stdout }] of results.entries()) {
      expect(code, commands[i]!.join(' ')).toBe(0);
      expect(stdout).toContain(`Usage: chargegate ${commands[i]!.join(' ')}`);
      expect(stdout).toMatch(/Global Options:[\s\S]*--config <file>[\s\S]*--json/);
    }
  });
});
