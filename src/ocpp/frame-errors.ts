import { OCPP16 } from './rpc.js';

/**
 * ocpp-rpc answers frames it cannot parse with OCPP 2.0.1 error codes (RpcFrameworkError,
 * MessageTypeNotSupported). OCPP 1.6-J (section 4.2.3) has neither: a 1.6 station gets FormationViolation,
 * "not conform the PDU structure", the 1.6 code for the same fault. (The 1.6 errata's renames of a handler's or
 * a schema check's FormatViolation and OccurenceConstraintViolation ocpp-rpc does itself.)
 */
const OCPP16_CODE: Record<string, string> = {
  RpcFrameworkError: 'FormationViolation',
  MessageTypeNotSupported: 'FormationViolation',
};

/**
 * ocpp-rpc puts the offending params (`details.data`) and the validator's errors in a CALLERROR, and echoes
 * the message id and the parser's message: a station could make us send back whatever it sent.
 * docs/operating/security.md#security allows at most 1 KiB of it; these shares keep the whole frame under that.
 */
const MAX_ID = 64;
const MAX_DESCRIPTION = 400;
const MAX_DETAILS = 400;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The validator's first complaint, which is what a station's developer needs, in a bounded form. */
function boundedDetails(details: unknown): object {
  const json = JSON.stringify(details ?? {});
  if (json.length <= MAX_DETAILS && !(details as { data?: unknown } | undefined)?.data) return details ?? {};
  const first = (details as { errors?: Array<{ instancePath?: string; message?: string }> } | undefined)?.errors?.[0];
  return first ? { error: clip(`${first.instancePath || '/'} ${first.message ?? ''}`.trim(), MAX_DETAILS - 20) } : {};
}

/**
 * Every frame a station gets passes here: a CALLERROR gets a bounded echo of what the station sent, and a 1.6
 * station OCPP 1.6 error codes (2.0.1 has RpcFrameworkError and MessageTypeNotSupported); other frames pass untouched.
 */
export function toStationFrame(frame: string, protocol: string | undefined): string {
  if (!frame.startsWith('[4,')) return frame;
  const parsed = JSON.parse(frame) as [number, string, string, string, unknown];
  const [, id, code, description, details] = parsed;
  const shown = protocol === OCPP16 ? (OCPP16_CODE[code] ?? code) : code;
  return JSON.stringify([
    4,
    clip(String(id), MAX_ID),
    shown,
    clip(String(description), MAX_DESCRIPTION),
    boundedDetails(details),
  ]);
}
