import path from 'node:path';

/** The daemon's local channel in its data dir (local-channel.ts): the CLI's live commands reach the daemon here. */
export const LOCAL_SOCKET_FILE = 'chargegate.sock';

export function localSocketPath(dataDir: string): string {
  return path.join(path.resolve(dataDir), LOCAL_SOCKET_FILE);
}

/** Linux keeps a socket's path in sun_path: 108 bytes with the terminating NUL. */
const MAX_SOCKET_PATH_BYTES = 107;

/** Why the daemon could not listen on its local socket in this dataDir (a config problem at dataDir), or null. */
export function socketPathProblem(dataDir: string): string | null {
  const socketPath = localSocketPath(dataDir);
  if (Buffer.byteLength(socketPath) <= MAX_SOCKET_PATH_BYTES) return null;
  return `dataDir: the local socket ${socketPath} would be longer than the ${MAX_SOCKET_PATH_BYTES} bytes a Unix socket's path may have: choose a shorter dataDir`;
}
