import { describe, expect, it } from 'vitest';
import { BaseReports, REPORT_VARIABLES_KEPT } from '../../src/stations/base-reports.js';

/** A NotifyReport part with `count` variables named Component.V<n>. */
function part(requestId: number, seqNo: number, count: number, tbc: boolean) {
  return {
    requestId,
    generatedAt: '2026-11-29T06:00:00.000Z',
    seqNo,
    tbc,
    reportData: Array.from({ length: count }, (_, i) => ({
      component: { name: 'Component' },
      variable: { name: `V${seqNo}-${i}` },
      variableAttribute: [{ value: String(i) }],
    })) as never,
  };
}

describe('a 2.0.1 base report kept in memory', () => {
  it(`keeps at most ${REPORT_VARIABLES_KEPT} variables, says it dropped the rest, and still follows the parts`, () => {
    const reports = new BaseReports();
    reports.asked('CP201', 7, new Date('2026-11-29T06:00:00Z'));
    for (let seqNo = 0; seqNo < 30; seqNo++) reports.received('CP201', part(7, seqNo, 100, seqNo < 29));
    const report = reports.of('CP201')!;
    expect(report.variables).toHaveLength(REPORT_VARIABLES_KEPT);
    expect(report).toMatchObject({ parts: 30, complete: true, truncated: true });
    expect(report.variables[0]).toEqual({ key: 'Component.V0-0', value: '0', readonly: false });
  });

  it('ignores parts of a report it did not ask for, and a new request replaces the last report', () => {
    const reports = new BaseReports();
    reports.received('CP201', part(1, 0, 1, false));
    expect(reports.of('CP201')).toBeUndefined();
    reports.asked('CP201', 2, new Date());
    reports.received('CP201', part(2, 0, 3, false));
    reports.received('CP201', part(3, 0, 5, false));
    expect(reports.of('CP201')).toMatchObject({ requestId: 2, parts: 1, complete: true });
    expect(reports.of('CP201')!.variables).toHaveLength(3);
    reports.asked('CP201', 4, new Date());
    expect(reports.of('CP201')).toMatchObject({ requestId: 4, parts: 0, complete: false, variables: [] });
  });
});
