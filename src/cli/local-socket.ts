import path from 'node:path';

/** The daemon's local channel in its data dir (local-channel.ts): the CLI's live commands reach the daemon here. */
export const LOCAL_SOCKET_FILE = 'chargegate.sock';

export function localSocketPath(dataDir: string): string {
  return path.join(path.resolve(dataDir), LOCAL_SOCKET_FILE);
}
