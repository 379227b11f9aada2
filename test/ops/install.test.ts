import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { pinnedNodeVersion } from '../../src/cli/runtime.js';
import { ROOT } from '../support/cli.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import { openNotifySocket, type NotifySocket } from '../support/notify-socket.js';
import { baseConfig } from '../support/temp-site.js';

const run = promisify(execFile);
const PREFIX = '/opt/chargegate';

function mode(file: string): string {
  return (statSync(file).mode & 0o777).toString(8);
}

/** `npm test` builds dist/ first (pretest); the installer's own build step is plain `npm run build`. */
function install(destdir: string): Promise<{ stdout: string; stderr: string }> {
  return run('bash', [path.join(ROOT, 'scripts/install.sh'), '--destdir', destdir, '--no-build'], {
    cwd: tmpdir(),
    timeout: 180_000,
  });
}

/** The unit's ExecStart as argv, the way systemd runs it. */
/** The words of the unit's directive lines (ExecStart=, ExecReload=...), in order. */
function execLines(unit: string, directive: string): string[][] {
  return unit
    .split('\n')
    .filter((l) => l.startsWith(`${directive}=`))
    .map((l) => l.slice(directive.length + 1).split(/\s+/));
}

function execStart(unit: string): string[] {
  return execLines(unit, 'ExecStart')[0]!;
}

async function systemdAnalyzeAvailable(): Promise<boolean> {
  try {
    await run('systemd-analyze', ['--version']);
    return true;
  } catch {
    return false;
  }
}

describe('scripts/install.sh into a staging root', () => {
  let destdir: string;
  let unitPath: string;
  let daemon: ChildProcess | undefined;
  let notify: NotifySocket | undefined;

  beforeAll(async () => {
    destdir = mkdtempSync(path.join(tmpdir(), 'chargegate-install-'));
    unitPath = path.join(destdir, 'etc/systemd/system/chargegate.service');
    const { stdout } = await install(destdir);
    expect(stdout).toContain(`${destdir}/etc/chargegate/chargegate.yaml: ok (1 site)`);
  }, 240_000);

  afterAll(async () => {
    if (daemon && daemon.exitCode === null) daemon.kill('SIGKILL');
    await notify?.close();
    rmSync(destdir, { recursive: true, force: true });
  });

  it('installs the program, the CLI, the unit, the service user definition, the config skeleton and the passphrase', () => {
    const unit = readFileSync(unitPath, 'utf8');
    const argv = execStart(unit);
    // The unit runs the Node.js chargegate brings, copied with the program, whatever node the machine has.
    expect(argv[0]).toBe(`${PREFIX}/node_modules/.bin/node`);
    expect(execFileSync(path.join(destdir, argv[0]!), ['--version'], { encoding: 'utf8' }).trim()).toBe(
      `v${pinnedNodeVersion()}`,
    );
    expect(argv.slice(1)).toEqual([
      '--enable-source-maps',
      '--max-semi-space-size=2',
      `${PREFIX}/dist/cli/main.js`,
      'run',
      '--config',
      '/etc/chargegate/chargegate.yaml',
    ]);
    expect(statSync(path.join(destdir, PREFIX, 'dist/cli/main.js')).isFile()).toBe(true);
    // Runtime dependencies only: the gateway gets no test tooling.
    expect(() => statSync(path.join(destdir, PREFIX, 'node_modules/better-sqlite3'))).not.toThrow();
    expect(() => statSync(path.join(destdir, PREFIX, 'node_modules/vitest'))).toThrow();

    // The CLI runs the program it is linked to (here the staged one), on the Node.js that program brings.
    const cli = path.join(destdir, 'usr/local/bin/chargegate');
    expect(readlinkSync(cli)).toBe(`../../..${PREFIX}/systemd/chargegate`);
    expect(mode(cli)).toBe('755');
    expect(execFileSync(cli, ['--version'], { encoding: 'utf8' }).trim()).toBe(
      JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version,
    );
    expect(readFileSync(path.join(destdir, 'etc/sysusers.d/chargegate.conf'), 'utf8')).toMatch(
      /^u chargegate .*\nm chargegate dialout$/m,
    );

    expect(mode(path.join(destdir, 'etc/chargegate/chargegate.yaml'))).toBe('640');
    expect(mode(path.join(destdir, 'etc/chargegate/credentials'))).toBe('700');
    expect(mode(path.join(destdir, 'etc/chargegate/credentials/keystore-passphrase'))).toBe('600');
    expect(readFileSync(path.join(destdir, 'etc/chargegate/credentials/keystore-passphrase'), 'utf8')).toMatch(
      /^[A-Za-z0-9_-]{43}$/,
    );
  });

  it('passes systemd-analyze verify without a warning', async () => {
    if (!(await systemdAnalyzeAvailable())) {
      // CI installs systemd (.ci/run): there, a missing systemd-analyze is a failure, not a skip.
      expect(process.env.CI, 'systemd-analyze is missing (apt-get install systemd)').not.toBe('true');
      return;
    }
    // verify checks that the Exec lines' binary exists: on the box it is the runtime under the prefix, here the staged
    // one.
    const staged = path.join(destdir, 'verify/chargegate.service');
    mkdirSync(path.dirname(staged), { recursive: true });
    writeFileSync(
      staged,
      readFileSync(unitPath, 'utf8').replace(new RegExp(`^(Exec\\w+=)${PREFIX}/`, 'gm'), `$1${destdir}${PREFIX}/`),
    );
    const { stdout, stderr } = await run('systemd-analyze', ['verify', staged]);
    expect(stderr).toBe('');
    expect(stdout).toBe('');
  });

  it('keeps the systemd-analyze security exposure below 2.1 (what it was before the system call deny list and PrivateMounts)', async () => {
    if (!(await systemdAnalyzeAvailable())) {
      expect(process.env.CI, 'systemd-analyze is missing (apt-get install systemd)').not.toBe('true');
      return;
    }
    const { stdout } = await run('systemd-analyze', ['security', '--offline=true', '--no-pager', unitPath]);
    const exposure = Number(/Overall exposure level for chargegate\.service: ([\d.]+)/.exec(stdout)?.[1]);
    expect(exposure).toBeLessThan(2.1);
  });

  it('refuses a prefix the service cannot see under ProtectHome=yes (exit 2, names the directory)', async () => {
    for (const prefix of ['/home/installer/chargegate', '/root/chargegate']) {
      const refused = await run('bash', [
        path.join(ROOT, 'scripts/install.sh'),
        '--destdir',
        destdir,
        '--prefix',
        prefix,
        '--no-build',
      ]).then(
        () => ({ code: 0, stderr: '' }),
        (err: { code: number; stderr: string }) => err,
      );
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        `--prefix ${prefix} is under /home, /root or /run/user, which the service cannot see (ProtectHome=yes)`,
      );
    }
    expect(existsSync(path.join(destdir, 'home'))).toBe(false);
  });

  it("runs again as an upgrade: the installer's config and the keystore passphrase are kept", async () => {
    const configPath = path.join(destdir, 'etc/chargegate/chargegate.yaml');
    const passphrase = readFileSync(path.join(destdir, 'etc/chargegate/credentials/keystore-passphrase'), 'utf8');
    const edited = `${readFileSync(configPath, 'utf8')}# edited by the installer\n`;
    writeFileSync(configPath, edited);

    const { stdout } = await install(destdir);
    expect(stdout).toContain(`kept the existing ${configPath}`);
    expect(stdout).toContain('kept the existing keystore passphrase');
    expect(readFileSync(configPath, 'utf8')).toBe(edited);
    expect(readFileSync(path.join(destdir, 'etc/chargegate/credentials/keystore-passphrase'), 'utf8')).toBe(passphrase);
  }, 240_000);

  it(
    'starts the installed program the way the unit does: READY=1, serving, an encrypted keystore, exit 0 on SIGTERM',
    async () => {
      const dataDir = path.join(destdir, 'var/lib/chargegate');
      const configPath = path.join(destdir, 'test-config.yaml');
      writeFileSync(configPath, stringify({ ...baseConfig(dataDir), log: { level: 'info' } }));
      notify = await openNotifySocket();
      const [node, ...args] = execStart(readFileSync(unitPath, 'utf8'));
      const argv = args.map((a) =>
        a === '/etc/chargegate/chargegate.yaml' ? configPath : a.startsWith(PREFIX) ? path.join(destdir, a) : a,
      );
      // What the unit's LoadCredential= and Type=notify give the service; systemd's PATH, where only the
      // distribution's node (if any) would be found.
      const env = {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        NOTIFY_SOCKET: notify.path,
        WATCHDOG_USEC: '2000000',
        CREDENTIALS_DIRECTORY: path.join(destdir, 'etc/chargegate/credentials'),
      };
      daemon = spawn(path.join(destdir, node!), argv, { cwd: destdir, env, stdio: ['ignore', 'pipe', 'inherit'] });
      let logs = '';
      daemon.stdout!.on('data', (chunk: Buffer) => (logs += chunk.toString()));

      await notify.waitFor('READY=1');
      await notify.waitFor('WATCHDOG=1');
      const ready = logs
        .split('\n')
        .map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg?: string; httpPort?: number }) : {}))
        .find((l) => l.msg === 'chargegate ready');
      expect((await fetch(`http://127.0.0.1:${ready!.httpPort}/health`)).status).toBe(200);
      expect(readFileSync(path.join(dataDir, 'keystore.json'), 'utf8')).toContain('ENCRYPTED PRIVATE KEY');

      const exited = new Promise<number | null>((resolve) => daemon!.once('exit', resolve));
      daemon.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'reload checks the config first: a config the daemon would refuse fails `systemctl reload` (exit 2, the key named); exit 2 is not restarted',
    async () => {
      const unit = readFileSync(unitPath, 'utf8');
      expect(unit).toMatch(/^RestartPreventExitStatus=2$/m);
      const [check, signal] = execLines(unit, 'ExecReload');
      expect(signal).toEqual(['/bin/kill', '-HUP', '$MAINPID']);
      const configPath = path.join(destdir, 'reload-config.yaml');
      const [node, ...args] = check!;
      const argv = args.map((a) =>
        a === '/etc/chargegate/chargegate.yaml' ? configPath : a.startsWith(PREFIX) ? path.join(destdir, a) : a,
      );
      const checkConfig = (config: Record<string, unknown>) => {
        writeFileSync(configPath, stringify(config));
        return new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = spawn(path.join(destdir, node!), argv, { cwd: destdir, stdio: ['ignore', 'ignore', 'pipe'] });
          let stderr = '';
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.once('exit', (code) => resolve({ code, stderr }));
        });
      };
      expect((await checkConfig(baseConfig(path.join(destdir, 'var/lib/chargegate')))).code).toBe(0);
      const refused = await checkConfig({
        ...baseConfig(path.join(destdir, 'var/lib/chargegate')),
        webhookDelivery: { retryIntervalS: 999_999 },
      });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('webhookDelivery.retryIntervalS');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it('uninstalls the program, the CLI and the unit, and keeps the config, the passphrase and the data', async () => {
    const { stdout } = await run('bash', [path.join(ROOT, 'scripts/install.sh'), '--destdir', destdir, '--uninstall']);
    expect(stdout).toContain('removed the program, the CLI and the unit');
    for (const gone of [
      PREFIX,
      'usr/local/bin/chargegate',
      'etc/systemd/system/chargegate.service',
      'etc/sysusers.d/chargegate.conf',
    ]) {
      expect(existsSync(path.join(destdir, gone)), gone).toBe(false);
    }
    for (const kept of [
      'etc/chargegate/chargegate.yaml',
      'etc/chargegate/credentials/keystore-passphrase',
      'var/lib/chargegate/chargegate.db',
    ]) {
      expect(existsSync(path.join(destdir, kept)), kept).toBe(true);
    }
  });
});
