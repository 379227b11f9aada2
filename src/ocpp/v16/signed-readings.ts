import { signedValueFromV16 } from '../../meter-signatures/index.js';
import type { SignedReadingInput } from '../../site/index.js';
import type { MeterValuesRequest } from './messages.js';

/**
 * The SampledValues with format SignedData of an OCPP 1.6 MeterValues or StopTransaction transactionData (README
 * "Signed meter values"): each value kept exactly as sent, whatever it holds; 1.6's default context is
 * Sample.Periodic.
 */
export function signedReadingsV16(
  connectorId: number,
  meterValues: readonly MeterValuesRequest['meterValue'][number][],
): SignedReadingInput[] {
  return meterValues.flatMap((mv) =>
    mv.sampledValue
      .filter((s) => s.format === 'SignedData')
      .map((s) => ({
        ...signedValueFromV16(s.value),
        asReceived: s.value,
        context: s.context ?? 'Sample.Periodic',
        timestamp: new Date(mv.timestamp),
        connectorId,
      })),
  );
}
