/** What a station says it is in its last BootNotification (a 2.0.1 one is kept under the 1.6 names). */
export interface StationIdentity {
  vendor: string | null;
  model: string | null;
  serialNumber: string | null;
  firmwareVersion: string | null;
}

export function stationIdentity(bootInfo: object | null): StationIdentity {
  const boot = (bootInfo ?? {}) as Record<string, unknown>;
  const text = (key: string) => (typeof boot[key] === 'string' ? boot[key] : null);
  return {
    vendor: text('chargePointVendor'),
    model: text('chargePointModel'),
    serialNumber: text('chargePointSerialNumber'),
    firmwareVersion: text('firmwareVersion'),
  };
}
