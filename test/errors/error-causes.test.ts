import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPlugin } from '../../src/authorization/plugin.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { cliFailure } from '../../src/cli/failure.js';
import { ERROR_CODES, errorCodeOf } from '../../src/errors/index.js';
import { readKeystoreDocument } from '../../src/keystore/keystore-file.js';
import { ROOT } from '../support/cli.js';
import { tempDirForTest } from '../support/for-test.js';

describe('errors chargegate raises on purpose', () => {
  it('keep what they wrap as `cause`: an unreadable config, a damaged keystore, a plugin that throws on import', async () => {
    const dir = tempDirForTest('errors');
    const missing = path.join(dir, 'missing.yaml');
    expect(() => loadConfig(missing)).toThrow(
      expect.objectContaining({ code: 'CHARGEGATE_CONFIG', cause: expect.objectContaining({ code: 'ENOENT' }) }),
    );

    const keystore = path.join(dir, 'keystore.json');
    writeFileSync(keystore, '{not json');
    expect(() => readKeystoreDocument(keystore)).toThrow(
      expect.objectContaining({ code: 'CHARGEGATE_KEYSTORE', cause: expect.any(SyntaxError) }),
    );

    // An installer's plugin keeps its own stack: the line that threw is in the cause.
    const plugin = path.join(dir, 'plugins', 'broken.mjs');
    mkdirSync(path.dirname(plugin));
    writeFileSync(plugin, "export function authorize() {}\nthrow new Error('plugin exploded');\n");
    const loading = await loadPlugin(plugin, 1000).then(
      () => expect.fail('the plugin loaded'),
      (err: unknown) => err as Error,
    );
    expect(loading).toMatchObject({
      code: 'CHARGEGATE_PLUGIN_LOAD',
      message: expect.stringContaining('plugin exploded'),
    });
    expect((loading.cause as Error).stack).toMatch(/broken\.mjs(\?\S*)?:2:/);
  });

  it('carry codes from the one registry, which the CLI translates by; anything else is a bug with its stack', () => {
    const refused = new ConfigError('/etc/x.yaml', ['http.port: at most 65535']);
    expect(ERROR_CODES).toContain(refused.code);
    expect(errorCodeOf(refused)).toBe('CHARGEGATE_CONFIG');
    expect(cliFailure(refused)).toEqual({ message: '/etc/x.yaml: http.port: at most 65535', exitCode: 2 });
    // A code that merely looks like ours (a cloned error from a dependency, a typo) is not ours.
    expect(errorCodeOf(Object.assign(new Error('x'), { code: 'CHARGEGATE_NOT_A_CODE' }))).toBeUndefined();
    expect(cliFailure(Object.assign(new Error('x'), { code: 'CHARGEGATE_NOT_A_CODE' }))).toBeUndefined();
  });

  it('every class in src that carries a CHARGEGATE_ code is a ChargegateError with a registered code', () => {
    const files = readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) =>
      f.endsWith('.ts'),
    );
    const classes = files.flatMap((file) =>
      [
        ...readFileSync(path.join(ROOT, 'src', file), 'utf8').matchAll(
          /class (\w+) extends (\w+) \{[^}]*?readonly code(?:: \w+)? = '(CHARGEGATE_\w+)'/g,
        ),
      ].map(([, name, base, code]) => ({
        file,
        name,
        base,
        code,
      })),
    );
    expect(classes.length).toBeGreaterThan(15);
    // A subclass of one of ours is ours too (UnknownApplicationError extends ApplicationError).
    const ours = new Set(['ChargegateError', ...classes.map((c) => c.name)]);
    expect(classes.filter((c) => !ours.has(c.base) || !(ERROR_CODES as readonly string[]).includes(c.code!))).toEqual(
      [],
    );
  });
});
