import { describe, expect, it } from 'vitest';
import { energyReadings, statusOf, stopReasonOf } from '../../src/ocpp/v201/mapping.js';

/** The last reading of the register a meter value list holds, Wh: a transaction's start or stop value. */
const importedEnergyWh = (meterValues: Parameters<typeof energyReadings>[0]) =>
  energyReadings(meterValues).at(-1)?.energyWh;

/** The tables docs/install/connecting-stations.md#ocpp-201-stations shows, held to the code. */
describe("OCPP 2.0.1 -> the webhooks' 1.6 words", () => {
  it("connector status: connectorStatus, with the open transaction's chargingState while Occupied", () => {
    expect(statusOf({ connectorStatus: 'Available' })).toEqual({ status: 'Available', errorCode: 'NoError' });
    expect(statusOf({ connectorStatus: 'Occupied' })).toEqual({ status: 'Preparing', errorCode: 'NoError' });
    expect(statusOf({ connectorStatus: 'Occupied', chargingState: 'EVConnected' }).status).toBe('Preparing');
    expect(statusOf({ connectorStatus: 'Occupied', chargingState: 'Idle' }).status).toBe('Preparing');
    expect(statusOf({ connectorStatus: 'Occupied', chargingState: 'Charging' }).status).toBe('Charging');
    expect(statusOf({ connectorStatus: 'Occupied', chargingState: 'SuspendedEV' }).status).toBe('SuspendedEV');
    expect(statusOf({ connectorStatus: 'Occupied', chargingState: 'SuspendedEVSE' }).status).toBe('SuspendedEVSE');
    expect(statusOf({ connectorStatus: 'Occupied', ended: true }).status).toBe('Finishing');
    expect(statusOf({ connectorStatus: 'Reserved' }).status).toBe('Reserved');
    expect(statusOf({ connectorStatus: 'Unavailable' }).status).toBe('Unavailable');
    expect(statusOf({ connectorStatus: 'Faulted' })).toEqual({ status: 'Faulted', errorCode: 'OtherError' });
  });

  it('stoppedReason: the reasons both versions share keep their name, ImmediateReset is HardReset, none is Local, the rest Other', () => {
    for (const same of [
      'DeAuthorized',
      'EmergencyStop',
      'EVDisconnected',
      'Local',
      'PowerLoss',
      'Reboot',
      'Remote',
    ] as const)
      expect(stopReasonOf(same)).toBe(same);
    expect(stopReasonOf('ImmediateReset')).toBe('HardReset');
    expect(stopReasonOf(undefined)).toBe('Local');
    for (const other of [
      'EnergyLimitReached',
      'GroundFault',
      'StoppedByEV',
      'Timeout',
      'SOCLimitReached',
      'Other',
    ] as const)
      expect(stopReasonOf(other)).toBe('Other');
  });

  it('meter start and stop: Energy.Active.Import.Register (the default measurand) in Wh whatever the unit; phases and other measurands ignored', () => {
    const at = '2026-11-25T09:00:00.000Z';
    expect(importedEnergyWh(undefined)).toBeUndefined();
    expect(importedEnergyWh([{ timestamp: at, sampledValue: [{ value: 1500 }] }])).toBe(1500);
    expect(importedEnergyWh([{ timestamp: at, sampledValue: [{ value: 4.25, unitOfMeasure: { unit: 'kWh' } }] }])).toBe(
      4250,
    );
    expect(
      importedEnergyWh([{ timestamp: at, sampledValue: [{ value: 3, unitOfMeasure: { unit: 'Wh', multiplier: 3 } }] }]),
    ).toBe(3000);
    expect(
      importedEnergyWh([
        {
          timestamp: at,
          sampledValue: [
            { value: 16, measurand: 'Current.Import' },
            { value: 700, measurand: 'Energy.Active.Import.Register', phase: 'L1' },
            { value: 2100, measurand: 'Energy.Active.Import.Register' },
          ],
        },
      ]),
    ).toBe(2100);
  });
});
