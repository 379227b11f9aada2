/** The sample contexts of routine readings: a queue past its limits drops these first. */
const ROUTINE_CONTEXTS = new Set(['Sample.Periodic', 'Sample.Clock']);

/**
 * docs/design/uplink.md#uplink-what-the-csms-sees: past queueLimit or queueBytesLimit the oldest routine readings go first. A 1.6
 * MeterValues is routine when every sample is periodic or clock-aligned (Sample.Periodic is the schema's default
 * context) and none is signed: a Begin or End reading, a triggered one or a signed one is kept.
 */
export function isDroppableReading(payload: object): boolean {
  const meterValue = (
    payload as { meterValue?: Array<{ sampledValue?: Array<{ context?: string; format?: string }> }> }
  ).meterValue;
  if (!meterValue) return false;
  return meterValue.every((mv) =>
    (mv.sampledValue ?? []).every(
      (s) => ROUTINE_CONTEXTS.has(s.context ?? 'Sample.Periodic') && s.format !== 'SignedData',
    ),
  );
}

/**
 * The 2.0.1 counterpart: a TransactionEvent Updated whose readings are all periodic or clock-aligned and unsigned,
 * naming no idToken and changing no chargingState. A Started or Ended, a token, a state change or a signed reading is
 * kept; so is an Updated that carries no reading at all (it reports something else).
 */
export function isDroppableTransactionEvent(payload: object): boolean {
  const event = payload as {
    eventType?: string;
    idToken?: unknown;
    transactionInfo?: { chargingState?: string };
    meterValue?: Array<{ sampledValue?: Array<{ context?: string; signedMeterValue?: unknown }> }>;
  };
  if (event.eventType !== 'Updated' || event.idToken !== undefined || event.transactionInfo?.chargingState)
    return false;
  const samples = (event.meterValue ?? []).flatMap((mv) => mv.sampledValue ?? []);
  return (
    samples.length > 0 &&
    samples.every((s) => ROUTINE_CONTEXTS.has(s.context ?? 'Sample.Periodic') && s.signedMeterValue === undefined)
  );
}
