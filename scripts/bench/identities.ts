/** Bench stations are CS0001, CS0002...: the config lists them, the load generators connect as them. */
export function stationId(index: number): string {
  return `CS${String(index + 1).padStart(4, '0')}`;
}

/** The first `count` bench station identities. */
export function stationIds(count: number): string[] {
  return Array.from({ length: count }, (_, i) => stationId(i));
}

/** The idTag a bench station uses: one per station, so that no tag ever has two open transactions. */
export function stationTag(stationIdentity: string): string {
  return `TAG-${stationIdentity}`;
}
