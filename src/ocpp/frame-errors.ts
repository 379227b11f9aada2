/**
 * ocpp-rpc answers frames it cannot parse with OCPP 2.0.1 error codes (RpcFrameworkError,
 * MessageTypeNotSupported). OCPP 1.6-J (section 4.2.3) has neither: a 1.6 station gets FormationViolation,
 * "not conform the PDU structure", the 1.6 code for the same fault.
 */
const OCPP16_CODE: Record<string, string> = {
  RpcFrameworkError: 'FormationViolation',
  MessageTypeNotSupported: 'FormationViolation',
  FormatViolation: 'FormationViolation',
  OccurenceConstraintViolation: 'OccurrenceConstraintViolation',
};

/** Rewrites an outgoing CALLERROR frame to OCPP 1.6 error codes; other frames pass untouched. */
export function toOcpp16Frame(frame: string): string {
  if (!frame.startsWith('[4,')) return frame;
  const parsed = JSON.parse(frame) as unknown[];
  const code = parsed[2];
  if (typeof code !== 'string' || !(code in OCPP16_CODE)) return frame;
  parsed[2] = OCPP16_CODE[code];
  return JSON.stringify(parsed);
}
