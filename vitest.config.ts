import { tmpdir } from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// V8's compiled code on disk for every Node.js process the tests start (CLI runs by the hundred, workers, threads):
// the same modules load again and again, and the lanes are CPU-bound on two cores.
process.env.NODE_COMPILE_CACHE ??= path.join(tmpdir(), 'chargegate-test-compile-cache');

/**
 * The system lane (`npm run test:system`): tests that install packages, start Chromium, fill a tmpfs, run the daemon
 * as its own process (kill -9, signals, the built dist/) or the CLI's live commands by the dozen, run the bench or the
 * demo, or talk to programs we did not write (Python, Go, Java, pymodbus, mbpoll, another OCPP implementation). They
 * take minutes and rarely change with an edit; `npm test` runs the rest, and `.ci/run` runs both
 * (CONTRIBUTING.md#test-lanes).
 */
const SYSTEM_TESTS = [
  'test/bench/**/*.test.ts',
  'test/ops/**/*.test.ts',
  'test/runtime/**/*.test.ts',
  // Chromium
  'test/status-page/load-chart.test.ts',
  'test/status-page/status-page.test.ts',
  'test/status-page/uplink-section.test.ts',
  // tmpfs (a full disk for real)
  'test/store/disk-full.test.ts',
  'test/store/layout.test.ts',
  'test/store/upgrade-backup.test.ts',
  'test/uplink/uplink-disk-full.test.ts',
  // kill -9
  'test/firmware/rollout-kill-9.test.ts',
  'test/load/site-scenario.test.ts',
  'test/modbus/meter-simulator-script.test.ts',
  'test/modbus/sessions-kill-9.test.ts',
  'test/ocpp/kill-9.test.ts',
  'test/ocpp/signed-meter-values-process.test.ts',
  'test/ocpp/station-simulator.test.ts',
  'test/service/single-daemon.test.ts',
  'test/uplink/uplink-kill-9.test.ts',
  'test/uplink/uplink-mixed-site.test.ts',
  'test/webhooks/crash.test.ts',
  // the daemon as its own process: signals and systemd, journald and a terminal, an open-files limit, the built
  // dist/ under load
  'test/ocpp/sign-certificate-process.test.ts',
  'test/service/lifecycle.test.ts',
  'test/service/log-destinations.test.ts',
  'test/service/open-files.test.ts',
  'test/uplink/csms-profiles-site.test.ts',
  'test/uplink/uplink-csms-flood.test.ts',
  // floods and slow peers with a latency bound (another station and /health within 1 s, a limit within 2 s): beside
  // three other workers on two cores the bound measures the box, not chargegate (two failed so once)
  'test/ocpp/call-lane-site.test.ts',
  'test/station-logs/slow-uploads.test.ts',
  'test/stations/operations-beside-limits.test.ts',
  'test/uplink/csms-profiles-bounds.test.ts',
  'test/uplink/uplink-queue-bounds.test.ts',
  // the CLI's live commands as processes, ~85 of them (a third of the in-process lane's time); the same operations
  // and answers run in-process through the API in test/stations/operation-outcomes.test.ts
  'test/cli/station-operations.test.ts',
  // peers we did not write
  'test/modbus/meter-cli.test.ts',
  'test/modbus/sessions-device-server.test.ts',
  'test/modbus/sessions-pymodbus-rtu.test.ts',
  'test/modbus/sessions-pymodbus-tcp.test.ts',
  'test/uplink/uplink-second-peer.test.ts',
  'test/station-logs/ftp-curl.test.ts',
  'test/webhooks/readme-receiver.test.ts',
  'test/webhooks/verifiers.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The system lane's tests spawn daemons and browsers, which use the two cores themselves.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'in-process',
          include: ['test/**/*.test.ts'],
          exclude: SYSTEM_TESTS,
          // A worker keeps the modules it imported for its next file: each file re-importing the daemon's sources
          // was a third of the lane's CPU time. Every resource a test makes is released where it is made.
          isolate: false,
          // With 2 workers it kept 1.05 cores busy (368 s of CPU in 349 s), its tests waiting on sockets, timers and
          // fsync; 4 keep both cores busy (CONTRIBUTING.md#test-lanes).
          maxWorkers: 4,
        },
      },
      // After the in-process files when one run names files of both lanes (their worker counts differ).
      { extends: true, test: { name: 'system', include: SYSTEM_TESTS, sequence: { groupOrder: 1 } } },
    ],
  },
});
