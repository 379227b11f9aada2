import { execFile, spawn } from 'node:child_process';
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
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { stringify } from 'yaml';
import { pinnedNodeVersion } from '../../src/cli/runtime.js';
import { DATABASE_FILE, KEYSTORE_FILE } from '../../src/store/index.js';
import { ROOT, runCli } from '../support/cli.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import {
  contentsOf,
  LATEST_SCHEMA,
  PREVIOUS_SCHEMA,
  previousReleaseDatabase,
  schemaOf,
} from '../support/previous-release.js';
import { baseConfig } from '../support/temp-site.js';

const run = promisify(execFile);
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const PROGRAM = 'usr/lib/chargegate';
/** What each architecture's package must run on: npm's name for it and the ELF e_machine of its binaries. */
const ARCHES = { amd64: { cpu: 'x64', elfMachine: 62 }, arm64: { cpu: 'arm64', elfMachine: 183 } } as const;

const dpkgDebFound = await run('dpkg-deb', ['--version']).then(
  () => true,
  () => false,
);
// CI installs nothing for this (dpkg is in every Debian); there a missing dpkg-deb fails instead of skipping.
if (!dpkgDebFound) expect(process.env.CI, 'dpkg-deb is missing (a Debian machine has it)').not.toBe('true');

/** Debian's arm64 loader and libraries for qemu-user (packages libc6-arm64-cross, libstdc++6-arm64-cross). */
const ARM64_LIBS = '/usr/aarch64-linux-gnu';
const qemuFound = await run('qemu-aarch64', ['-L', ARM64_LIBS, '--version']).then(
  () =>
    existsSync(path.join(ARM64_LIBS, 'lib/ld-linux-aarch64.so.1')) &&
    existsSync(path.join(ARM64_LIBS, 'lib/libstdc++.so.6')),
  () => false,
);

/**
 * dpkg into a scratch root rather than a debootstrapped chroot: the root holds nothing but the package and dpkg's
 * database, the maintainer scripts run on this machine's tools with DPKG_ROOT set (--force-script-chrootless), and
 * the program runs from where dpkg put it. The host's systemd is not running that root, so nothing is started.
 */
function dpkg(root: string, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run('dpkg', [`--root=${root}`, '--force-script-chrootless', '--force-depends', '--log=/dev/null', ...args], {
    timeout: 120_000,
  });
}

function mode(file: string): string {
  return (statSync(file).mode & 0o777).toString(8);
}

/** The id of `name` in a passwd or group file of the scratch root. */
function idIn(file: string, name: string): number {
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  return Number(line!.split(':')[2]);
}

/**
 * `chargegate --version`, `check-config`, and `run` on a config on free ports under `root`: ready, /health 200, and
 * exit 0 on SIGTERM. `command` is how the shipped program is started.
 */
async function expectWorkingProgram(command: string[], root: string): Promise<void> {
  const [file, ...prefix] = command as [string, ...string[]];
  // systemd's PATH, where only the distribution's node (if any) would be found.
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin' };
  expect((await run(file, [...prefix, '--version'], { env })).stdout.trim()).toBe(VERSION);

  const configPath = path.join(root, 'test-config.yaml');
  writeFileSync(
    configPath,
    stringify({ ...baseConfig(path.join(root, 'var/lib/chargegate')), log: { level: 'info' } }),
  );
  expect((await run(file, [...prefix, 'check-config', '--config', configPath], { env })).stdout).toContain(
    `${configPath}: ok (1 site)`,
  );
  await runUntilHealthy(command, configPath);
}

/** `chargegate run` on `configPath` until it is ready and /health answers 200, then SIGTERM: exit 0. */
async function runUntilHealthy(command: string[], configPath: string): Promise<void> {
  const [file, ...prefix] = command as [string, ...string[]];
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin' };
  const daemon = spawn(file, [...prefix, 'run', '--config', configPath], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => daemon.once('exit', resolve));
  try {
    const httpPort = await new Promise<number>((resolve, reject) => {
      let logs = '';
      daemon.stdout.on('data', (chunk: Buffer) => {
        logs += chunk.toString();
        const ready = logs
          .split('\n')
          .map((l) =>
            l.startsWith('{') && l.endsWith('}') ? (JSON.parse(l) as { msg?: string; httpPort?: number }) : {},
          )
          .find((l) => l.msg === 'chargegate ready');
        if (ready) resolve(ready.httpPort!);
      });
      daemon.once('exit', (code) => reject(new Error(`chargegate run exited ${code} before it was ready:\n${logs}`)));
    });
    expect((await fetch(`http://127.0.0.1:${httpPort}/health`)).status).toBe(200);
    daemon.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    if (daemon.exitCode === null) daemon.kill('SIGKILL');
  }
}

describe.skipIf(!dpkgDebFound)('npm run package: the .deb and .tar.gz for amd64 and arm64', () => {
  let out: string;
  let root: string;
  const deb = (arch: keyof typeof ARCHES) => path.join(out, `chargegate_${VERSION}_${arch}.deb`);

  beforeAll(async () => {
    out = mkdtempSync(path.join(tmpdir(), 'chargegate-package-'));
    // `npm test` builds dist/ first (pretest); the packages are built once for every test here.
    await run('bash', [path.join(ROOT, 'scripts/package.sh'), '--arch', 'all', '--out', out], {
      cwd: ROOT,
      timeout: 600_000,
    });
    root = path.join(out, 'root');
    mkdirSync(path.join(root, 'var/lib/dpkg/info'), { recursive: true });
    mkdirSync(path.join(root, 'var/lib/dpkg/updates'));
    // Where systemd-sysusers takes its lock and writes the user: every root has it.
    mkdirSync(path.join(root, 'etc'));
    writeFileSync(path.join(root, 'var/lib/dpkg/status'), '');
  }, 600_000);

  afterAll(() => {
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it.each(Object.entries(ARCHES))(
    '%s: control data, file list, and binaries built for that architecture',
    async (arch, { cpu, elfMachine }) => {
      const file = deb(arch as keyof typeof ARCHES);
      const info = (await run('dpkg-deb', ['--info', file])).stdout;
      expect(info).toMatch(new RegExp(`^ Package: chargegate\\n Version: ${VERSION}\\n Architecture: ${arch}\\n`, 'm'));
      expect(info).toMatch(
        /^ Depends: libc6 \(>= 2\.28\), libstdc\+\+6, libgcc-s1, systemd, init-system-helpers \(>= 1\.54~\)$/m,
      );
      for (const script of ['preinst', 'postinst', 'prerm', 'postrm'])
        expect(info).toMatch(new RegExp(`^ +\\d+ bytes, +\\d+ lines +\\* +${script} +#!/bin/sh$`, 'm'));

      const listing = (await run('dpkg-deb', ['--contents', file], { maxBuffer: 64 * 1024 * 1024 })).stdout
        .trim()
        .split('\n');
      const names = listing.map((l) => l.split(/\s+/).slice(5).join(' ').replace(/^\.\//, ''));
      expect(names).toContain('usr/bin/chargegate -> ../lib/chargegate/systemd/chargegate');
      expect(names).toContain(`${PROGRAM}/node_modules/.bin/node -> ../node-linux-${cpu}/bin/node`);
      for (const shipped of [
        'usr/lib/systemd/system/chargegate.service',
        'usr/lib/sysusers.d/chargegate.conf',
        `${PROGRAM}/dist/cli/main.js`,
        `${PROGRAM}/systemd/setup-host.sh`,
      ]) {
        expect(names).toContain(shipped);
      }
      // The config and the passphrase are the postinst's to write once; a file in the package would be replaced.
      expect(names.filter((n) => n.startsWith('etc/'))).toEqual([]);
      // Runtime dependencies only, and nothing that only a compiler would read.
      for (const absent of [
        'node_modules/vitest/',
        'node_modules/typescript/',
        `node_modules/node-linux-${cpu}/include/`,
        'node_modules/better-sqlite3/deps/',
      ]) {
        expect(
          names.some((n) => n.startsWith(`${PROGRAM}/${absent}`)),
          absent,
        ).toBe(false);
      }
      const addons = names.filter((n) => n.endsWith('.node'));
      expect(addons.sort()).toEqual([
        `${PROGRAM}/node_modules/@serialport/bindings-cpp/prebuilds/linux-${cpu}/@serialport+bindings-cpp${cpu === 'arm64' ? '.armv8' : ''}.glibc.node`,
        `${PROGRAM}/node_modules/better-sqlite3/prebuilds/linux-${cpu}.node`,
      ]);

      // The ELF header's e_machine of the runtime and both addons, read from the package's own data.
      const extracted = path.join(out, `x-${arch}`);
      const binaries = [`${PROGRAM}/node_modules/node-linux-${cpu}/bin/node`, ...addons];
      mkdirSync(extracted);
      await run('bash', [
        '-c',
        'dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" "${@:3}"',
        'extract',
        file,
        extracted,
        ...binaries.map((b) => `./${b}`),
      ]);
      for (const binary of binaries)
        expect(readFileSync(path.join(extracted, binary)).readUInt16LE(18), binary).toBe(elfMachine);

      // The .tar.gz is the same tree without dpkg's control data.
      const tarNames = (
        await run('tar', ['-tzf', path.join(out, `chargegate_${VERSION}_${arch}.tar.gz`)], {
          maxBuffer: 64 * 1024 * 1024,
        })
      ).stdout
        .trim()
        .split('\n');
      const plain = (n: string) => n.replace(/ -> .*$/, '').replace(/\/$/, '');
      expect(tarNames.map(plain).sort()).toEqual(
        names
          .map(plain)
          .filter((n) => n !== '')
          .sort(),
      );
    },
  );

  it('installs the amd64 package with dpkg: the service user, the unit enabled, the config and passphrase written once', async () => {
    const { stdout } = await dpkg(root, '--install', deb('amd64'));
    expect(stdout).toContain(`${root}/etc/chargegate/chargegate.yaml: ok (1 site)`);

    const uid = idIn(path.join(root, 'etc/passwd'), 'chargegate');
    const gid = idIn(path.join(root, 'etc/group'), 'chargegate');
    expect(readFileSync(path.join(root, 'etc/group'), 'utf8')).toMatch(/^dialout:x:\d+:chargegate$/m);
    expect(statSync(path.join(root, 'var/lib/chargegate'))).toMatchObject({ uid, gid });
    expect(mode(path.join(root, 'var/lib/chargegate'))).toBe('750');
    expect(statSync(path.join(root, 'etc/chargegate/chargegate.yaml'))).toMatchObject({ uid: 0, gid });
    expect(mode(path.join(root, 'etc/chargegate/chargegate.yaml'))).toBe('640');
    expect(mode(path.join(root, 'etc/chargegate/credentials'))).toBe('700');
    expect(mode(path.join(root, 'etc/chargegate/credentials/keystore-passphrase'))).toBe('600');
    expect(readFileSync(path.join(root, 'etc/chargegate/credentials/keystore-passphrase'), 'utf8')).toMatch(
      /^[A-Za-z0-9_-]{43}$/,
    );
    expect(readlinkSync(path.join(root, 'etc/systemd/system/multi-user.target.wants/chargegate.service'))).toBe(
      '/usr/lib/systemd/system/chargegate.service',
    );

    // The unit runs the Node.js the package brings.
    const unit = readFileSync(path.join(root, 'usr/lib/systemd/system/chargegate.service'), 'utf8');
    const execStart = /^ExecStart=(\S+) .* (\S+) run --config \/etc\/chargegate\/chargegate\.yaml$/m.exec(unit);
    expect(execStart?.slice(1)).toEqual([`/${PROGRAM}/node_modules/.bin/node`, `/${PROGRAM}/dist/cli/main.js`]);
    expect((await run(path.join(root, execStart![1]!), ['--version'])).stdout.trim()).toBe(`v${pinnedNodeVersion()}`);
  });

  it(
    'runs the shipped chargegate from the installed tree: --version, check-config, and run answering /health',
    async () => {
      await expectWorkingProgram([path.join(root, 'usr/bin/chargegate')], root);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "arm64: the package's Node.js runs its program under qemu-user: --version, check-config, and run answering /health",
    async () => {
      if (!qemuFound) {
        // CI installs qemu-user and Debian's arm64 runtime libraries (.ci/run): there, a missing one is a failure.
        expect(
          process.env.CI,
          'qemu-aarch64 is missing (apt-get install qemu-user libc6-arm64-cross libstdc++6-arm64-cross)',
        ).not.toBe('true');
        return;
      }
      const armRoot = path.join(out, 'arm64-root');
      await run('dpkg-deb', ['-x', deb('arm64'), armRoot]);
      // What /usr/bin/chargegate runs, with the loader and libraries an arm64 Debian has in / taken from the cross
      // packages.
      const program = path.join(armRoot, PROGRAM);
      await expectWorkingProgram(
        [
          'qemu-aarch64',
          '-L',
          ARM64_LIBS,
          path.join(program, 'node_modules/.bin/node'),
          path.join(program, 'dist/cli/main.js'),
        ],
        armRoot,
      );
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it('installs again as an upgrade: the edited config and the keystore passphrase are kept', async () => {
    const configPath = path.join(root, 'etc/chargegate/chargegate.yaml');
    const passphrase = readFileSync(path.join(root, 'etc/chargegate/credentials/keystore-passphrase'), 'utf8');
    const edited = `${readFileSync(configPath, 'utf8')}# edited by the installer\n`;
    writeFileSync(configPath, edited);

    const { stdout } = await dpkg(root, '--install', deb('amd64'));
    expect(stdout).toContain(`kept the existing ${configPath}`);
    expect(stdout).toContain('kept the existing keystore passphrase');
    expect(readFileSync(configPath, 'utf8')).toBe(edited);
    expect(readFileSync(path.join(root, 'etc/chargegate/credentials/keystore-passphrase'), 'utf8')).toBe(passphrase);
  });

  it(
    'upgrades a database the previous schema left at work and rolls it back, losing nothing that was there',
    async () => {
      const chargegate = path.join(root, 'usr/bin/chargegate');
      const dataDir = path.join(root, 'var/lib/chargegate-upgrade');
      const file = path.join(dataDir, DATABASE_FILE);
      previousReleaseDatabase(file);
      const before = contentsOf(file);
      const configPath = path.join(root, 'upgrade-config.yaml');
      writeFileSync(configPath, stringify({ ...baseConfig(dataDir), log: { level: 'info' } }));

      // The installed daemon's first start copies the database, then migrates it.
      await runUntilHealthy([chargegate], configPath);
      expect(schemaOf(file)).toBe(LATEST_SCHEMA);
      expect(contentsOf(file)).toEqual(before);

      const { stdout } = await run(chargegate, ['rollback', '--yes', '--config', configPath]);
      expect(stdout).toContain(`Restored schema ${PREVIOUS_SCHEMA}`);
      expect(stdout).toContain('lost: 0 events, 0 transactions started and 0 stopped since the upgrade');
      expect(schemaOf(file)).toBe(PREVIOUS_SCHEMA);
      expect(contentsOf(file)).toEqual(before);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'an upgrade stops the running daemon before dpkg unpacks the new files (preinst), in this root only',
    async () => {
      const control = path.join(out, 'control');
      await run('dpkg-deb', ['--control', deb('amd64'), control]);
      const configPath = path.join(root, 'preinst-config.yaml');
      writeFileSync(
        configPath,
        stringify({ ...baseConfig(path.join(root, 'var/lib/chargegate-preinst')), log: { level: 'info' } }),
      );
      const daemon = spawn(path.join(root, 'usr/bin/chargegate'), ['run', '--config', configPath], {
        env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      onTestFinished(() => {
        if (daemon.exitCode === null) daemon.kill('SIGKILL');
      });
      const exited = new Promise<number | null>((resolve) => daemon.once('exit', resolve));
      let logs = '';
      await new Promise<void>((resolve, reject) => {
        daemon.stdout.on('data', (chunk: Buffer) => {
          logs += chunk.toString();
          if (logs.includes('"msg":"chargegate ready"')) resolve();
        });
        daemon.once('exit', (code) => reject(new Error(`chargegate run exited ${code} before it was ready:\n${logs}`)));
      });
      // The unit's stop as systemd does it: SIGTERM to the main process, returning once it has exited.
      const bin = path.join(out, 'systemd-bin');
      mkdirSync(bin);
      const calls = path.join(out, 'systemd-calls');
      writeFileSync(
        path.join(bin, 'deb-systemd-invoke'),
        `#!/bin/sh\necho "$*" >>${calls}\n[ "$1" = stop ] || exit 0\nkill -TERM ${daemon.pid}\nwhile kill -0 ${daemon.pid} 2>/dev/null; do sleep 0.1; done\n`,
        { mode: 0o755 },
      );
      // In a mount namespace of its own, where /run says systemd runs, as it does on a gateway.
      const preinst = (env: Record<string, string>) =>
        run(
          'unshare',
          [
            '--mount',
            'sh',
            '-c',
            `mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system && exec sh "$0" upgrade ${VERSION}`,
            path.join(control, 'preinst'),
          ],
          { env: { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, ...env }, timeout: 60_000 },
        );
      // Into another root (dpkg --root): that root's services are not this systemd's.
      await preinst({ DPKG_ROOT: root });
      expect(existsSync(calls)).toBe(false);
      expect(daemon.exitCode).toBeNull();
      await preinst({});
      expect(readFileSync(calls, 'utf8')).toBe('stop chargegate.service\n');
      expect(await exited).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it('removing keeps the config, the passphrase and the data; purging deletes them', async () => {
    await dpkg(root, '--remove', 'chargegate');
    expect(existsSync(path.join(root, PROGRAM)), PROGRAM).toBe(false);
    expect(existsSync(path.join(root, 'usr/bin/chargegate'))).toBe(false);
    for (const kept of [
      'etc/chargegate/chargegate.yaml',
      'etc/chargegate/credentials/keystore-passphrase',
      'var/lib/chargegate/chargegate.db',
    ]) {
      expect(existsSync(path.join(root, kept)), kept).toBe(true);
    }

    await dpkg(root, '--purge', 'chargegate');
    for (const gone of [
      'etc/chargegate',
      'var/lib/chargegate',
      'etc/systemd/system/multi-user.target.wants/chargegate.service',
    ]) {
      expect(existsSync(path.join(root, gone)), gone).toBe(false);
    }
  });

  it(
    'purging with dataDir outside /var/lib/chargegate keeps the passphrase with the keystore only it opens',
    async () => {
      await dpkg(root, '--install', deb('amd64'));
      const configPath = path.join(root, 'etc/chargegate/chargegate.yaml');
      writeFileSync(
        configPath,
        readFileSync(configPath, 'utf8').replace(/^dataDir: .*$/m, 'dataDir: /srv/chargegate/'),
      );
      const credentials = path.join(root, 'etc/chargegate/credentials');
      const passphrase = readFileSync(path.join(credentials, 'keystore-passphrase'), 'utf8');
      // The keystore the service makes at its first start, encrypted with the passphrase systemd gives it.
      const moved = path.join(root, 'srv/chargegate');
      const movedConfig = path.join(out, 'moved-config.yaml');
      writeFileSync(movedConfig, stringify(baseConfig(moved)));
      const service = { PATH: '/usr/local/bin:/usr/bin:/bin', CREDENTIALS_DIRECTORY: credentials };
      await run(path.join(root, 'usr/bin/chargegate'), ['keys', 'list', '--config', movedConfig], { env: service });
      expect(existsSync(path.join(moved, KEYSTORE_FILE))).toBe(true);

      const { stderr } = await dpkg(root, '--purge', 'chargegate');
      expect(stderr).toContain('kept /etc/chargegate: the keystore in dataDir /srv/chargegate opens only with');
      expect(existsSync(path.join(root, PROGRAM))).toBe(false);
      expect(existsSync(path.join(root, 'var/lib/chargegate'))).toBe(false);
      expect(readFileSync(path.join(credentials, 'keystore-passphrase'), 'utf8')).toBe(passphrase);
      // Both kept, and the one still opens the other; another passphrase does not.
      expect(
        await runCli(['keys', 'rotate', '--config', movedConfig], { env: { CREDENTIALS_DIRECTORY: credentials } }),
      ).toMatchObject({ code: 0 });
      const wrong = await runCli(['keys', 'rotate', '--config', movedConfig], {
        env: { CHARGEGATE_KEYSTORE_PASSPHRASE: 'not-the-passphrase' },
      });
      expect(wrong.code).not.toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
