// Both threads: loaded by the delivery thread and by the main thread.
/**
 * RFC 9421 section 2.5 signature base: one `"component": value` line per covered component, then the
 * `"@signature-params"` line, joined by \n with no trailing newline. Both signature profiles sign these bytes.
 */
export interface SignatureParams {
  /** Covered component identifiers in signing order, e.g. ["@method", "@path", "x-request-id"]. */
  components: readonly string[];
  created: number;
  keyid: string;
  alg: string;
}

/** The `@signature-params` value as RFC 9421 serialises it: an inner list of strings, then the parameters. */
export function serializeSignatureParams(params: SignatureParams): string {
  const list = params.components.map((c) => `"${c}"`).join(' ');
  return `(${list});created=${params.created};keyid="${params.keyid}";alg="${params.alg}"`;
}

/** values[i] is the value of params.components[i]. */
export function signatureBase(params: SignatureParams, values: readonly string[]): string {
  if (values.length !== params.components.length) throw new Error('one value per covered component');
  const lines = params.components.map((component, i) => `"${component}": ${values[i]}`);
  lines.push(`"@signature-params": ${serializeSignatureParams(params)}`);
  return lines.join('\n');
}
