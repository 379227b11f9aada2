import type { StationUpdateState } from './rollout-store.js';

/** What one FirmwareStatusNotification means for a station's update. */
export type Progress =
  | { kind: 'state'; state: Extract<StationUpdateState, 'downloading' | 'downloaded' | 'installing' | 'installed'> }
  | { kind: 'failed'; reason: string }
  /** A 1.6 station said Installed: installed once it boots with the new version; with the old one, failed. */
  | { kind: 'installed-reported' }
  /** Idle and the like: says nothing of this update. */
  | { kind: 'none' };

const STATES: Record<string, Progress> = {
  Downloading: { kind: 'state', state: 'downloading' },
  DownloadScheduled: { kind: 'state', state: 'downloading' },
  DownloadPaused: { kind: 'state', state: 'downloading' },
  Downloaded: { kind: 'state', state: 'downloaded' },
  SignatureVerified: { kind: 'state', state: 'downloaded' },
  Installing: { kind: 'state', state: 'installing' },
  InstallScheduled: { kind: 'state', state: 'installing' },
  InstallRebooting: { kind: 'state', state: 'installing' },
};

const FAILURES = new Set(['DownloadFailed', 'InstallationFailed', 'InstallVerificationFailed', 'InvalidSignature']);

/**
 * A 1.6 or 2.0.1 FirmwareStatusNotification's status as a step of the update (contract 11.2): 2.0.1 Installed is the
 * end; a 1.6 station's Installed is believed once it boots with a new firmwareVersion.
 */
export function progressOf(status: string, v201: boolean): Progress {
  if (status === 'Installed') return v201 ? { kind: 'state', state: 'installed' } : { kind: 'installed-reported' };
  if (FAILURES.has(status)) return { kind: 'failed', reason: `the station reported ${status}` };
  return STATES[status] ?? { kind: 'none' };
}
