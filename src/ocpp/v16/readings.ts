import { signedValueFromV16 } from '../../meter-signatures/index.js';
import { checkEnergyWh, type MeterReadingInput, type SignedReadingInput } from '../../site/index.js';
import type { MeterValuesRequest } from './messages.js';

type MeterValue = MeterValuesRequest['meterValue'][number];

const ENERGY = 'Energy.Active.Import.Register';

/**
 * The SampledValues with format SignedData of an OCPP 1.6 MeterValues or StopTransaction transactionData
 * (docs/partners/signed-meter-values.md#signed-meter-values): each value kept exactly as sent, whatever it holds; 1.6's default context is
 * Sample.Periodic.
 */
export function signedReadingsV16(connectorId: number, meterValues: readonly MeterValue[]): SignedReadingInput[] {
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

/**
 * The plain readings of the whole register (Energy.Active.Import.Register, the default measurand, no phase) in Wh
 * (docs/operating/flash-wear.md#what-the-daemon-writes-flash-wear). A value no register can hold is left out, not refused: 1.6 MeterValues were
 * answered whatever they held before chargegate kept any.
 */
export function energyReadingsV16(meterValues: readonly MeterValue[]): MeterReadingInput[] {
  return meterValues.flatMap((mv) =>
    mv.sampledValue.flatMap((s) => {
      if ((s.measurand ?? ENERGY) !== ENERGY || s.phase !== undefined || (s.format ?? 'Raw') !== 'Raw') return [];
      const unit = s.unit ?? 'Wh';
      if ((unit !== 'Wh' && unit !== 'kWh') || s.value.trim() === '') return [];
      try {
        const energyWh = checkEnergyWh(ENERGY, Number(s.value) * (unit === 'kWh' ? 1000 : 1));
        return [{ context: s.context ?? 'Sample.Periodic', timestamp: new Date(mv.timestamp), energyWh }];
      } catch {
        return [];
      }
    }),
  );
}
