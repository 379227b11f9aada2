import { REGISTER_WORDS, type RegisterSpec } from './register-map.js';

/**
 * The value of one register spec from its 16-bit words as the device sent them. Bytes within a word are always
 * big-endian (Modbus); wordOrder says whether the most significant word comes first. NaN and infinities pass
 * through: rejecting them is the reading check's job.
 */
export function decodeRegister(spec: RegisterSpec, words: readonly number[]): number {
  const count = REGISTER_WORDS[spec.type];
  if (words.length !== count) throw new Error(`${spec.type} needs ${count} registers, got ${words.length}`);
  const ordered = spec.wordOrder === 'little' ? [...words].reverse() : words;
  const bytes = Buffer.alloc(count * 2);
  ordered.forEach((word, i) => bytes.writeUInt16BE(word & 0xffff, i * 2));
  return rawValue(spec.type, bytes) * spec.scale;
}

function rawValue(type: RegisterSpec['type'], bytes: Buffer): number {
  switch (type) {
    case 'float32':
      return bytes.readFloatBE(0);
    case 'int16':
      return bytes.readInt16BE(0);
    case 'uint16':
      return bytes.readUInt16BE(0);
    case 'int32':
      return bytes.readInt32BE(0);
    case 'uint32':
      return bytes.readUInt32BE(0);
    case 'int64':
      return Number(bytes.readBigInt64BE(0));
    case 'uint64':
      return Number(bytes.readBigUInt64BE(0));
  }
}
