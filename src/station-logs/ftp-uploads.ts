import { lstatSync, type Stats } from 'node:fs';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import type { EventEmitter } from 'node:events';
import { FileSystem, FtpSrv, type FtpConnection } from 'ftp-srv';
import { ListenError } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { safeName, UploadTooLargeError } from './log-files.js';
import type { UploadReception } from './reception.js';
import type { UploadGrant } from './upload-grants.js';

/**
 * What a station needs to log in, upload and leave; nothing else is answered (502). No PORT/EPRT (active mode would
 * make the gateway connect where the client says), no RETR, DELE, RNFR/RNTO, MKD/RMD, APPE, REST, STOU, SITE.
 */
const COMMANDS = [
  'USER',
  'PASS',
  'SYST',
  'FEAT',
  'OPTS',
  'TYPE',
  'MODE',
  'STRU',
  'PWD',
  'CWD',
  'CDUP',
  'PASV',
  'EPSV',
  'LIST',
  'NLST',
  'SIZE',
  'MDTM',
  'STOR',
  'ALLO',
  'NOOP',
  'ABOR',
  'QUIT',
];

/** A connection that has not logged in by then is closed. */
const LOGIN_WITHIN_MS = 30_000;
/** At most this many FTP connections at once (a station uses one, plus one data connection at a time). */
const MAX_CONNECTIONS = 64;

export interface FtpUploadsOptions {
  host: string;
  port: number;
  passivePorts: [number, number];
  /** The IPv4 address stations are told to open passive data connections to. */
  passiveAddress: string;
  reception: UploadReception;
  logger: Logger;
  now: () => number;
}

export interface FtpUploads {
  /** The bound port (logs.ftp.port 0 lets the OS choose). */
  port: number;
  close(): Promise<void>;
}

/**
 * The FTP upload locations (contract 11.3): ftp-srv in passive mode, a user and password per upload (spent by its
 * first login session, cut when the upload window ends), each session confined to its upload's folder by
 * UploadFolder, which stores through the same reception as HTTP uploads (bounds, one kept file, temporary name, no
 * symlink followed). An upload over logs.maxUploadBytes is answered 552.
 */
export async function startFtpUploads(options: FtpUploadsOptions): Promise<FtpUploads> {
  const { reception, now } = options;
  const log = options.logger.child({ component: 'ftp' });
  const signalsBefore = new Map(SIGNALS.map((s) => [s, process.listeners(s)]));
  const server = new FtpSrv({
    url: `ftp://${options.host}:${options.port}`,
    pasv_url: options.passiveAddress,
    pasv_min: options.passivePorts[0],
    pasv_max: options.passivePorts[1],
    anonymous: false,
    whitelist: COMMANDS,
    greeting: 'chargegate: station log uploads',
    // ftp-srv's own lines (every refused command is an "error" there) are for debugging only.
    log: log.child({ library: 'ftp-srv' }, { level: 'fatal' }),
  });
  // ftp-srv exits the process on SIGTERM/SIGINT/SIGQUIT by itself: the daemon's own stop must decide that.
  for (const signal of SIGNALS)
    for (const listener of process.listeners(signal))
      if (!signalsBefore.get(signal)?.includes(listener)) process.off(signal, listener);

  const timers = new Map<string, NodeJS.Timeout>();
  const endSession = (id: string, connection: FtpConnection, after: number, why: string): void => {
    clearTimeout(timers.get(id));
    timers.set(
      id,
      setTimeout(() => void connection.close(421, why as unknown as number), Math.max(0, after)),
    );
  };
  // Typed by ftp-srv for its other events only.
  (server as EventEmitter).on('connect', ({ connection, id }: { connection: FtpConnection; id: string }) =>
    endSession(id, connection, LOGIN_WITHIN_MS, 'no login in time'),
  );
  server.on('disconnect', ({ id }) => {
    clearTimeout(timers.get(id));
    timers.delete(id);
  });
  server.on('login', ({ connection, username, password }, resolve, reject) => {
    const grant = reception.grants.login(username, password);
    if (!grant) {
      log.info({ user: username.slice(0, 64), address: connection.ip }, 'FTP login refused: wrong, used or expired');
      return reject(new Error('login refused'));
    }
    log.info({ logId: grant.logId, stationId: grant.stationId, address: connection.ip }, 'FTP upload session opened');
    endSession(connection.id, connection, grant.expiresAt - now(), 'upload window ended');
    const folder = new UploadFolder(connection, grant, reception);
    answerTooLargeWith552(connection, folder);
    resolve({ fs: folder });
  });
  (server as unknown as { server: { maxConnections: number } }).server.maxConnections = MAX_CONNECTIONS;
  try {
    await server.listen();
  } catch (err) {
    throw new ListenError(`logs.ftp: cannot listen on ${options.host}:${options.port}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const address = (server as unknown as { server: { address(): { port: number } } }).server.address();
  return {
    port: address.port,
    async close() {
      timers.forEach((t) => clearTimeout(t));
      await server.close();
    },
  };
}

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGQUIT'] as const;

/** ftp-srv answers every failed STOR 550; one refused for its size is 552 (RFC 959: exceeded storage allocation). */
function answerTooLargeWith552(connection: FtpConnection, folder: UploadFolder): void {
  const reply = connection.reply.bind(connection);
  connection.reply = (options: number | object, ...letters: unknown[]) => {
    if (options === 550 && folder.refusedTooLarge) {
      folder.refusedTooLarge = false;
      return reply(552, ...letters);
    }
    return reply(options, ...letters);
  };
}

/**
 * The one folder an FTP session sees, as `/`: it may list it and store files in it, nothing else. Every path is
 * resolved as the client means it (relative to `/`, `..` stopping at `/`) and anything but `/` or a file directly in
 * it is refused; files go through the reception, never through ftp-srv's own file system.
 */
class UploadFolder extends FileSystem {
  refusedTooLarge = false;

  constructor(
    connection: FtpConnection,
    private readonly grant: UploadGrant,
    private readonly reception: UploadReception,
  ) {
    super(connection, { root: path.join(reception.files.root, grant.logId), cwd: '/' });
  }

  override currentDirectory(): string {
    return '/';
  }

  override async get(name: string): Promise<Stats & { name: string }> {
    const where = clientPath(name);
    if (where === '/') return { ...folderStat(), name: '/' } as Stats & { name: string };
    const file = this.keptFile(where);
    if (!file) throw new Error('no such file in the upload folder');
    return Object.assign(file.stat, { name: file.name });
  }

  override async list(where = '.'): Promise<Array<Stats & { name: string }>> {
    if (clientPath(where) !== '/') throw new Error('only / can be listed');
    return this.reception.files.namesIn(this.grant.logId).flatMap((name) => {
      const file = this.keptFile(`/${name}`);
      return file ? [Object.assign(file.stat, { name })] : [];
    });
  }

  override async chdir(where = '.'): Promise<string> {
    if (clientPath(where) !== '/') throw new Error('only / exists here');
    return '/';
  }

  override write(name: string, { append, start }: { append?: boolean; start?: unknown } = {}) {
    const where = clientPath(name);
    if (append || start !== undefined || path.posix.dirname(where) !== '/' || where === '/')
      throw new Error('store a new file directly in /');
    // ftp-srv answers 550 (not taken) to a refused STOR: the location ended (the collection failed, the window
    // passed), it took its file already (one per collection: more would only push other stations' logs out), or
    // another upload holds it. 552 stays the answer to a file over logs.maxUploadBytes.
    const claim = this.reception.claim(this.grant);
    if (!claim) throw new Error('this upload location has ended, took its file already, or is receiving one');
    const body = new PassThrough();
    const received = this.reception.receive(claim, path.posix.basename(where), body, 'ftp');
    received.then(
      () => claim.release(),
      () => claim.release(),
    );
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        if (body.write(chunk)) done();
        else body.once('drain', () => done());
      },
      // ftp-srv answers 226 once this finishes: only after the file is kept and the collection told.
      final(done) {
        body.end();
        received.then(
          () => done(),
          (err: unknown) => done(err as Error),
        );
      },
      // A data connection broken off ends the upload (and its claim on the grant) at once, not at the window's end.
      destroy(err, done) {
        body.destroy(err ?? undefined);
        done(err);
      },
    });
    received.catch((err: unknown) => {
      if (err instanceof UploadTooLargeError) this.refusedTooLarge = true;
      sink.destroy(err as Error);
    });
    return { stream: sink, clientPath: where };
  }

  override async read(): Promise<never> {
    throw new Error('uploads only');
  }

  override async delete(): Promise<never> {
    throw new Error('uploads only');
  }

  override async mkdir(): Promise<never> {
    throw new Error('uploads only');
  }

  override async rename(): Promise<never> {
    throw new Error('uploads only');
  }

  override async chmod(): Promise<never> {
    throw new Error('uploads only');
  }

  private keptFile(where: string): { name: string; stat: Stats } | undefined {
    const name = path.posix.basename(where);
    if (path.posix.dirname(where) !== '/' || safeName(name) !== name) return undefined;
    const file = this.reception.files.pathOf(this.grant.logId, name);
    const stat = file === undefined ? undefined : lstatSync(file, { throwIfNoEntry: false });
    return stat ? { name, stat } : undefined;
  }
}

/** The path the client means, from `/` (its only directory): `..` ends at `/`, backslashes count as slashes. */
function clientPath(name: string | undefined): string {
  return path.posix.normalize(path.posix.join('/', (name ?? '.').replace(/\\/g, '/')));
}

function folderStat(): Partial<Stats> {
  const at = new Date();
  return {
    isDirectory: () => true,
    isFile: () => false,
    size: 0,
    mode: 0o40700,
    mtime: at,
    uid: 0,
    gid: 0,
    nlink: 1,
  };
}
