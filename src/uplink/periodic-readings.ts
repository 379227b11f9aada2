/**
 * README "Uplink to a CSMS": past queueLimit the oldest periodic readings go first. A 1.6 MeterValues is periodic
 * when every sample is (Sample.Periodic is the schema's default context) and none is signed: a Begin or End reading,
 * a clock-aligned one or a signed one is kept.
 */
export function isPeriodicReading(payload: object): boolean {
  const meterValue = (
    payload as { meterValue?: Array<{ sampledValue?: Array<{ context?: string; format?: string }> }> }
  ).meterValue;
  if (!meterValue) return false;
  return meterValue.every((mv) =>
    (mv.sampledValue ?? []).every(
      (s) => (s.context ?? 'Sample.Periodic') === 'Sample.Periodic' && s.format !== 'SignedData',
    ),
  );
}
