import { REGISTER_WORDS, type MeterRegisterMap, type RegisterSpec } from './register-map.js';

/** One Modbus request: read `count` registers from `address` with function code 3 (holding) or 4 (input). */
export interface RegisterRead {
  functionCode: 3 | 4;
  address: number;
  count: number;
}

/**
 * The fewest requests that cover the given registers of the map (by default all of them): ranges of one function code
 * are joined when they touch, or when the gap between them is at most the map's maxReadGap, as long as the request
 * stays within the device's maxRegistersPerRead.
 */
export function planReads(
  map: MeterRegisterMap,
  specs: readonly RegisterSpec[] = [map.energyImportKWh, ...currentSpecs(map)],
): RegisterRead[] {
  const reads: RegisterRead[] = [];
  for (const functionCode of [3, 4] as const) {
    const ranges = specs
      .filter((s) => s.functionCode === functionCode)
      .map((s) => ({ start: s.address, end: s.address + REGISTER_WORDS[s.type] }))
      .sort((a, b) => a.start - b.start);
    let current: { start: number; end: number } | undefined;
    for (const range of ranges) {
      const end = Math.max(current?.end ?? 0, range.end);
      if (current && range.start <= current.end + map.maxReadGap && end - current.start <= map.maxRegistersPerRead) {
        current.end = end;
        continue;
      }
      if (current) reads.push({ functionCode, address: current.start, count: current.end - current.start });
      current = { ...range };
    }
    if (current) reads.push({ functionCode, address: current.start, count: current.end - current.start });
  }
  return reads;
}

/** The registers a circuit meter is read with: phase currents, and the power where the map has it. */
export function currentSpecs(map: MeterRegisterMap): RegisterSpec[] {
  return [...map.currentA, ...(map.powerW ? [map.powerW] : [])];
}

/** The registers of one value, taken from the responses to a plan's requests. */
export function wordsOf(
  spec: RegisterSpec,
  reads: readonly RegisterRead[],
  responses: ReadonlyArray<readonly number[]>,
): number[] {
  const words = REGISTER_WORDS[spec.type];
  const index = reads.findIndex(
    (r) =>
      r.functionCode === spec.functionCode && spec.address >= r.address && spec.address + words <= r.address + r.count,
  );
  const response = responses[index];
  const read = reads[index];
  if (!response || !read) throw new Error(`no request covers register ${spec.address} (function ${spec.functionCode})`);
  return response.slice(spec.address - read.address, spec.address - read.address + words);
}
