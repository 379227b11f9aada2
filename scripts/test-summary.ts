// One line per test lane and a total, from vitest's JSON reports (.ci/run). A lane whose report is missing (its run
// died before writing it) counts as a failure, so a run cannot end green on a lane that never reported.
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface JsonReport {
  startTime: number;
  numPassedTests: number;
  numFailedTests: number;
  testResults: Array<{ endTime: number }>;
}

let passed = 0;
let failed = 0;
for (const reportFile of process.argv.slice(2)) {
  const lane = path.basename(reportFile, '.json');
  try {
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as JsonReport;
    passed += report.numPassedTests;
    failed += report.numFailedTests;
    const ended = Math.max(report.startTime, ...report.testResults.map((file) => file.endTime));
    const seconds = Math.round((ended - report.startTime) / 1000);
    console.log(`${lane} lane, ${seconds} s: ${report.numPassedTests} passed, ${report.numFailedTests} failed`);
  } catch (err) {
    failed += 1;
    console.log(`${lane} lane: no report (${(err as Error).message})`);
  }
}
console.log(`tests: ${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
