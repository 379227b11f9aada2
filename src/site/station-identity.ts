/** What a station says it is in its last BootNotification (a 2.0.1 one is kept under the 1.6 names). */
export interface StationIdentity {
  vendor: string | null;
  model: string | null;
  serialNumber: string | null;
  firmwareVersion: string | null;
}

export function stationIdentity(bootInfo: object | null): StationIdentity {
  const boot = (bootInfo ?? {}) as Record<string, unknown>;
  const text = (...keys: string[]): string | null => {
    const value = keys.map((key) => boot[key]).find((v) => typeof v === 'string');
    return typeof value === 'string' ? value : null;
  };
  return {
    vendor: text('chargePointVendor'),
    model: text('chargePointModel'),
    // 1.6 has both: the charge point's serial, and the older chargeBoxSerialNumber some stations fill instead.
    serialNumber: text('chargePointSerialNumber', 'chargeBoxSerialNumber'),
    firmwareVersion: text('firmwareVersion'),
  };
}
