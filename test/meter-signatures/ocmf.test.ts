import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CHECKABLE_ALGORITHMS,
  OcmfFormatError,
  parseMeterPublicKey,
  parseOcmf,
  signedEnergyWh,
  signedValueFromV16,
  verifySignedValue,
} from '../../src/meter-signatures/index.js';
import { tempDirForTest } from '../support/for-test.js';
import { forged, meterKey, meterKeyForms, ocmfRecord, simulatedRecord } from '../support/ocmf.js';

describe('OCMF records', () => {
  it('reads a record: the payload text exactly as signed, its readings, the signature with its defaults', () => {
    const key = meterKey();
    const record = ocmfRecord(key, { tx: 'B', kWh: 12.345 });
    const parsed = parseOcmf(record);
    expect(record).toBe(`OCMF|${parsed.payloadText}|${record.slice(record.lastIndexOf('|') + 1)}`);
    expect(parsed.readings).toEqual([
      expect.objectContaining({ type: 'B', value: 12.345, unit: 'kWh', id: '1-b:1.8.0' }),
    ]);
    expect(parsed.signature).toMatchObject({
      algorithm: 'ECDSA-secp256r1-SHA256',
      encoding: 'hex',
      mimeType: 'application/x-der',
    });
  });

  it('never throws anything but OcmfFormatError, whatever follows the header', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string(), (a, b) => {
        for (const text of [`OCMF|${a}`, `OCMF|${a}|${b}`, `OCMF|{"RD":${a}}|{"SD":${JSON.stringify(b)}}`, a]) {
          try {
            parseOcmf(text);
          } catch (err) {
            expect(err).toBeInstanceOf(OcmfFormatError);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('verifies as false, null or true and never throws, for any JSON-shaped record or 1.6 value', () => {
    const key = meterKey();
    const json = fc.jsonValue().map((v) => JSON.stringify(v));
    fc.assert(
      fc.property(json, json, fc.option(fc.string()), (payload, signature, publicKey) => {
        for (const data of [`OCMF|${payload}|${signature}`, payload]) {
          const value = { ...signedValueFromV16(data), publicKey: publicKey ?? null };
          const verdict = verifySignedValue(value, { pinned: [] });
          expect([true, false, null]).toContain(verdict.verified);
          expect(verifySignedValue(value, { pinned: [key.publicKey] }).verified).not.toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a record signed by the meter verifies with its key, P-256 and P-384, SD hex or base64; a forged one does not', () => {
    for (const curve of ['P-256', 'P-384'] as const) {
      const key = meterKey(curve);
      for (const encoding of ['hex', 'base64'] as const) {
        const record = ocmfRecord(key, { tx: 'E', kWh: 20 }, { encoding });
        const value = {
          signedMeterData: record,
          signingMethod: key.algorithm,
          encodingMethod: 'OCMF',
          publicKey: key.publicKeyHex,
        };
        expect(verifySignedValue(value, { pinned: [] }).verified).toBe(true);
        expect(verifySignedValue({ ...value, signedMeterData: forged(record) }, { pinned: [] }).verified).toBe(false);
        // base64 of the record, as OCPP 2.0.1 has signedMeterData, and a base64 key.
        const wrapped = {
          ...value,
          signedMeterData: Buffer.from(record).toString('base64'),
          publicKey: Buffer.from(key.publicKeyHex, 'hex').toString('base64'),
        };
        expect(verifySignedValue(wrapped, { pinned: [] }).verified).toBe(true);
      }
    }
  });

  it('another meter’s key, a pinned key the record does not match, a simulated signature: false; no key: null', () => {
    const meter = meterKey();
    const other = meterKey();
    const record = ocmfRecord(meter, { tx: 'B', kWh: 1 });
    const value = {
      signedMeterData: record,
      signingMethod: null,
      encodingMethod: 'OCMF',
      publicKey: other.publicKeyHex,
    };
    expect(verifySignedValue(value, { pinned: [] }).verified).toBe(false);
    // A pinned key wins over the one the station sent.
    expect(verifySignedValue(value, { pinned: [meter.publicKey] }).verified).toBe(true);
    expect(verifySignedValue({ ...value, publicKey: meter.publicKeyHex }, { pinned: [other.publicKey] }).verified).toBe(
      false,
    );
    expect(verifySignedValue({ ...value, publicKey: null }, { pinned: [] }).verified).toBeNull();
    const simulated = {
      signedMeterData: simulatedRecord(1, 'B'),
      signingMethod: null,
      encodingMethod: 'OCMF',
      publicKey: null,
    };
    expect(verifySignedValue(simulated, { pinned: [] }).verified).toBe(false);
    // Not OCMF: cannot be told. Garbage naming no encoding: false.
    expect(
      verifySignedValue({ ...value, encodingMethod: 'EDL', signedMeterData: 'AAECAw==' }, { pinned: [] }).verified,
    ).toBeNull();
    expect(verifySignedValue(signedValueFromV16('garbage'), { pinned: [] }).verified).toBe(false);
  });

  it('a key and a record made by the openssl command verify', () => {
    const dir = tempDirForTest('openssl-ocmf');
    const file = (name: string) => path.join(dir, name);
    execFileSync('openssl', ['ecparam', '-name', 'secp384r1', '-genkey', '-noout', '-out', file('meter.key')]);
    execFileSync('openssl', ['ec', '-in', file('meter.key'), '-pubout', '-out', file('meter.pub')], {
      stdio: 'ignore',
    });
    const payload = '{"FV":"1.0","PG":"T9","MS":"OSSL-1","IS":true,"IT":"NONE","RD":[{"TX":"E","RV":7.5,"RU":"kWh"}]}';
    writeFileSync(file('payload'), payload);
    const sd = execFileSync('openssl', ['dgst', '-sha256', '-sign', file('meter.key'), file('payload')]).toString(
      'hex',
    );
    const record = `OCMF|${payload}|{"SA":"ECDSA-secp384r1-SHA256","SD":"${sd}"}`;
    const pem = readFileSync(file('meter.pub'), 'utf8');
    const value = { signedMeterData: record, signingMethod: null, encodingMethod: 'OCMF', publicKey: pem };
    expect(verifySignedValue(value, { pinned: [] }).verified).toBe(true);
    expect(verifySignedValue(value, { pinned: [parseMeterPublicKey(pem)] }).verified).toBe(true);
    // The record says P-384: a P-256 pinned key cannot have signed it.
    expect(verifySignedValue(value, { pinned: [meterKey('P-256').publicKey] }).verified).toBe(false);
  });

  it('1.6 values: the whitepaper JSON form and a bare record, fields exactly as sent', () => {
    const key = meterKey();
    const record = ocmfRecord(key, { tx: 'B', kWh: 3 });
    const json = JSON.stringify({
      signedMeterData: record,
      signingMethod: key.algorithm,
      encodingMethod: 'OCMF',
      publicKey: key.publicKeyHex,
    });
    expect(signedValueFromV16(json)).toEqual({
      signedMeterData: record,
      signingMethod: key.algorithm,
      encodingMethod: 'OCMF',
      publicKey: key.publicKeyHex,
    });
    expect(signedValueFromV16(record)).toEqual({
      signedMeterData: record,
      signingMethod: null,
      encodingMethod: 'OCMF',
      publicKey: null,
    });
    expect(signedValueFromV16('{"broken')).toEqual({
      signedMeterData: '{"broken',
      signingMethod: null,
      encodingMethod: null,
      publicKey: null,
    });
  });

  it('the signed energy of a Begin or End reading, with the half step it is written to', () => {
    const key = meterKey();
    expect(signedEnergyWh({ signedMeterData: ocmfRecord(key, { tx: 'B', kWh: 12.3 }) }, 'B')).toEqual({
      wh: 12300,
      toleranceWh: 50,
    });
    expect(signedEnergyWh({ signedMeterData: ocmfRecord(key, { tx: 'E', kWh: 12.345 }) }, 'E')).toEqual({
      wh: 12345,
      toleranceWh: 0.5,
    });
    // The precision is the record's, as written: trailing zeros count ("12.000" is to the Wh).
    expect(signedEnergyWh({ signedMeterData: ocmfRecord(key, { tx: 'E', kWh: '12.000' }) }, 'E')).toEqual({
      wh: 12000,
      toleranceWh: 0.5,
    });
    expect(signedEnergyWh({ signedMeterData: ocmfRecord(key, { tx: 'E', kWh: '12.300' }) }, 'E')).toEqual({
      wh: 12300,
      toleranceWh: 0.5,
    });
    expect(signedEnergyWh({ signedMeterData: ocmfRecord(key, { tx: 'E', kWh: '12' }) }, 'E')).toEqual({
      wh: 12000,
      toleranceWh: 500,
    });
    expect(signedEnergyWh({ signedMeterData: ocmfRecord(key, { tx: 'E', kWh: '1.25e1' }) }, 'E')).toEqual({
      wh: 12500,
      toleranceWh: 50,
    });
    expect(signedEnergyWh({ signedMeterData: 'garbage' }, 'E')).toBeUndefined();
  });

  it('meter keys: PEM, hex or base64 DER; anything else is refused with why', () => {
    const key = meterKey();
    const pem = key.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    for (const text of [
      pem,
      key.publicKeyHex,
      Buffer.from(key.publicKeyHex, 'hex').toString('base64'),
      Buffer.from(pem).toString('base64'),
    ])
      expect(parseMeterPublicKey(text).equals(key.publicKey)).toBe(true);
    expect(() => parseMeterPublicKey('not a key')).toThrow(/PEM, or the hex or base64/);
    expect(() => parseMeterPublicKey('abcd')).toThrow(/not a public key/);
  });

  it('meter keys in every form the OCA note and OCPP 2.0.1 allow, every curve checked: Begin and End readings verify, forged ones do not', () => {
    expect(CHECKABLE_ALGORITHMS).toEqual(expect.arrayContaining(['ECDSA-secp256r1-SHA256', 'ECDSA-secp384r1-SHA256']));
    for (const algorithm of CHECKABLE_ALGORITHMS) {
      const key = meterKey(algorithm);
      for (const tx of ['B', 'E'] as const) {
        const record = ocmfRecord(key, { tx, kWh: 12.5 });
        for (const [form, publicKey] of Object.entries(meterKeyForms(key))) {
          const value = { signedMeterData: record, signingMethod: key.algorithm, encodingMethod: 'OCMF', publicKey };
          expect(parseMeterPublicKey(publicKey).equals(key.publicKey), `${algorithm}: ${form}`).toBe(true);
          expect(verifySignedValue(value, { pinned: [] }), `${algorithm} ${tx}: ${form}`).toEqual({ verified: true });
          const forgedValue = { ...value, signedMeterData: forged(record) };
          expect(verifySignedValue(forgedValue, { pinned: [] }).verified, `${algorithm} ${tx}: ${form}`).toBe(false);
        }
      }
    }
  });

  it('a station key in no form read: verified null (cannot tell) with why, never false', () => {
    const key = meterKey();
    const record = ocmfRecord(key, { tx: 'E', kWh: 3 });
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    for (const publicKey of [
      'not a key',
      'oca:base16:asn1:',
      'oca:base64:asn1:%%%',
      b64('oca:base32:asn1:GEZDG'),
      b64(`oca:base16:asn1:${key.publicKeyHex.slice(0, 40)}`),
    ]) {
      const verdict = verifySignedValue(
        { signedMeterData: record, signingMethod: key.algorithm, encodingMethod: 'OCMF', publicKey },
        { pinned: [] },
      );
      expect(verdict, publicKey).toEqual({ verified: null, problem: expect.stringMatching(/^the station's key: /) });
    }
  });
});
