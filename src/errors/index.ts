/**
 * Every code an error chargegate raises on purpose carries, in one list (as fastify's and undici's error registries
 * are): each error class takes its code from here, and the CLI (`cli/failure.ts`) and HTTP (`http/http-errors.ts`)
 * translate by these codes, once each. CONTRIBUTING.md#working-on-chargegate, "Errors and logs".
 */
export const ERROR_CODES = [
  'CHARGEGATE_APPLICATION_REFUSED',
  'CHARGEGATE_CLI',
  'CHARGEGATE_CONFIG',
  'CHARGEGATE_DATABASE_DAMAGED',
  'CHARGEGATE_DATABASE_NEWER',
  'CHARGEGATE_DATA_DIR_IN_USE',
  'CHARGEGATE_DATA_DIR_UNUSABLE',
  'CHARGEGATE_DOMAIN_REFUSED',
  'CHARGEGATE_FILE_UNREADABLE',
  'CHARGEGATE_FIRMWARE',
  'CHARGEGATE_INVALID_ACCESS_TOKEN',
  'CHARGEGATE_INVALID_OPERATION',
  'CHARGEGATE_KEYSTORE',
  'CHARGEGATE_LISTEN',
  'CHARGEGATE_LOGS_IN_PROGRESS',
  'CHARGEGATE_METER_KEY',
  'CHARGEGATE_MIGRATION_FAILED',
  'CHARGEGATE_MODBUS_BUS',
  'CHARGEGATE_NO_BASE_REPORT',
  'CHARGEGATE_OCMF_MALFORMED',
  'CHARGEGATE_OUT_OF_BOUNDS',
  'CHARGEGATE_PARTNER_TOKEN',
  'CHARGEGATE_PLUGIN_LOAD',
  'CHARGEGATE_STATION_BUSY',
  'CHARGEGATE_STATION_CALL',
  'CHARGEGATE_STATION_CSR',
  'CHARGEGATE_STATION_OFFLINE',
  'CHARGEGATE_STATION_TIMEOUT',
  'CHARGEGATE_STATUS_SCRIPT_MISSING',
  'CHARGEGATE_TRANSACTION_STOPPED',
  'CHARGEGATE_UNKNOWN_APPLICATION',
  'CHARGEGATE_UNKNOWN_CONNECTOR',
  'CHARGEGATE_UPLOAD_TOO_LARGE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** An error chargegate raises on purpose: a stable code from ERROR_CODES and a message meant to be read as it is. */
export abstract class ChargegateError extends Error {
  abstract readonly code: ErrorCode;
}

/**
 * The code of an error chargegate raised on purpose, whatever its class (an error built elsewhere with our code
 * counts); undefined for anything else.
 */
export function errorCodeOf(err: unknown): ErrorCode | undefined {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return (ERROR_CODES as readonly unknown[]).includes(code) ? (code as ErrorCode) : undefined;
}
