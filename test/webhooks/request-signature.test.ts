import { constants, generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../src/webhooks/index.js';
import { ownWebhookKeys, verifyDocumentedSignature, verifyRfc9421Signature } from '../support/webhook-verifier.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 3072 });
const ed25519 = generateKeyPairSync('ed25519');
const keys = ownWebhookKeys(privateKey, ed25519.privateKey);
const DOCUMENTED = { profile: 'documented', alg: 'rsa-pss-sha256' } as const;
const RFC9421_RSA = { profile: 'rfc9421', alg: 'rsa-pss-sha512' } as const;
const RFC9421_ED25519 = { profile: 'rfc9421', alg: 'ed25519' } as const;
const requestId = '1f0e6a1c-8d0b-4f53-9d8e-2f6f0b7a9c11';
const body =
  '{"eventId":"e","eventType":"Authorize","siteId":"s1","timestamp":"2026-11-21T10:15:30.123+01:00","payload":{}}';

function header(headers: Array<[string, string]>, name: string): string {
  const found = headers.find(([n]) => n.toLowerCase() === name.toLowerCase());
  if (!found) throw new Error(`no ${name}`);
  return found[1];
}

/** The test request signed with an rfc9421 variant at `created`. */
function rfc9421Signed(signature: typeof RFC9421_ED25519 | typeof RFC9421_RSA, created: number) {
  return signRequest(
    signature,
    {
      method: 'POST',
      url: new URL('http://partner.example/webhook/events'),
      requestId,
      contentType: 'application/json',
      body,
    },
    keys,
    created,
  );
}

/** The signed test request as a partner's server receives it. */
function asReceived(headers: Array<[string, string]>) {
  return {
    method: 'POST',
    url: '/webhook/events',
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'x-request-id': requestId,
      'content-digest': header(headers, 'Content-Digest'),
      'signature-input': header(headers, 'Signature-Input'),
      signature: header(headers, 'Signature'),
    },
    body: Buffer.from(body),
  };
}

describe('documented signature profile (contract section 5)', async () => {
  const headers = await signRequest(
    DOCUMENTED,
    {
      method: 'POST',
      url: new URL('http://partner.example/webhook/events'),
      requestId,
      contentType: 'application/json',
      body,
    },
    keys,
    1763720130,
  );

  it('sends Signature-Input in the interface document form', () => {
    expect(headers.map(([n]) => n)).toEqual(['Signature-Input', 'Signature']);
    expect(header(headers, 'Signature-Input')).toBe(
      'sig1=created=1763720130;keyId="webhook";alg="rsa-pss-sha256";headers="@method @path x-request-id"',
    );
    expect(header(headers, 'Signature')).toMatch(/^sig1=:[A-Za-z0-9+/]+={0,2}:$/);
  });

  it('signs the contract example signature base byte for byte with PSS SHA-256 salt 32', () => {
    const contractBase = [
      '"@method": POST',
      '"@path": /webhook/events',
      '"x-request-id": 1f0e6a1c-8d0b-4f53-9d8e-2f6f0b7a9c11',
      '"@signature-params": ("@method" "@path" "x-request-id");created=1763720130;keyid="webhook";alg="rsa-pss-sha256"',
    ].join('\n');
    const signature = Buffer.from(/^sig1=:(.*):$/.exec(header(headers, 'Signature'))![1]!, 'base64');
    expect(signature.length).toBe(384);
    expect(
      verify(
        'sha256',
        Buffer.from(contractBase),
        { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
        signature,
      ),
    ).toBe(true);
    expect(
      verify(
        'sha256',
        Buffer.from(`${contractBase}\n`),
        { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
        signature,
      ),
    ).toBe(false);
    expect(
      verify(
        'sha256',
        Buffer.from(contractBase),
        { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 },
        signature,
      ),
    ).toBe(false);
  });

  it('signs the path without the query string and verifies with the contract-text verifier', async () => {
    const signed = await signRequest(
      DOCUMENTED,
      {
        method: 'POST',
        url: new URL('http://partner.example/in/hook?tenant=7'),
        requestId,
        contentType: 'application/json',
        body,
      },
      keys,
      1763720130,
    );
    const request = {
      method: 'POST',
      url: '/in/hook?tenant=7',
      headers: {
        'x-request-id': requestId,
        'signature-input': header(signed, 'Signature-Input'),
        signature: header(signed, 'Signature'),
      },
      body: Buffer.from(body),
    };
    expect(verifyDocumentedSignature(request, publicKey)).toBe(true);
    expect(
      verifyDocumentedSignature({ ...request, headers: { ...request.headers, 'x-request-id': 'other' } }, publicKey),
    ).toBe(false);
    expect(verifyDocumentedSignature({ ...request, url: '/in/other' }, publicKey)).toBe(false);
  });
});

describe('rfc9421 signature profile', async () => {
  const created = Math.floor(Date.now() / 1000);
  const headers = await rfc9421Signed(RFC9421_RSA, created);
  const request = asReceived(headers);

  it("sends standard structured fields with keyid = the key's own id and rsa-pss-sha512", () => {
    expect(headers.map(([n]) => n)).toEqual(['Content-Digest', 'Signature-Input', 'Signature']);
    expect(header(headers, 'Signature-Input')).toBe(
      `sig1=("@method" "@path" "x-request-id" "content-type" "content-length" "content-digest");created=${created};keyid="${keys.rsa.id}";alg="rsa-pss-sha512"`,
    );
    expect(header(headers, 'Content-Digest')).toMatch(/^sha-256=:[A-Za-z0-9+/]{43}=:$/);
  });

  it('verifies with the http-message-signatures package and fails on any change', async () => {
    expect(await verifyRfc9421Signature(request, publicKey)).toBe(true);
    expect(await verifyRfc9421Signature({ ...request, body: Buffer.from(body.replace('s1', 's2')) }, publicKey)).toBe(
      false,
    );
    expect(
      await verifyRfc9421Signature(
        { ...request, headers: { ...request.headers, 'content-type': 'text/plain' } },
        publicKey,
      ),
    ).toBe(false);
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    expect(await verifyRfc9421Signature(request, other)).toBe(false);
  });

  it('uses PSS salt length 64 as RFC 9421 requires for rsa-pss-sha512', () => {
    const params = /^sig1=(.*)$/.exec(header(headers, 'Signature-Input'))![1]!;
    const base = [
      '"@method": POST',
      '"@path": /webhook/events',
      `"x-request-id": ${requestId}`,
      '"content-type": application/json',
      `"content-length": ${Buffer.byteLength(body)}`,
      `"content-digest": ${header(headers, 'Content-Digest')}`,
      `"@signature-params": ${params}`,
    ].join('\n');
    const signature = Buffer.from(/^sig1=:(.*):$/.exec(header(headers, 'Signature'))![1]!, 'base64');
    expect(
      verify(
        'sha512',
        Buffer.from(base),
        { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 },
        signature,
      ),
    ).toBe(true);
  });
});

describe('rfc9421 signature profile with ed25519', async () => {
  const created = Math.floor(Date.now() / 1000);
  const signed = (signature: typeof RFC9421_ED25519 | typeof RFC9421_RSA) => rfc9421Signed(signature, created);
  const headers = await signed(RFC9421_ED25519);

  it("covers the same components and Content-Digest as the RSA variant, keyid = the Ed25519 key's own id", async () => {
    expect(headers.map(([n]) => n)).toEqual(['Content-Digest', 'Signature-Input', 'Signature']);
    expect(header(headers, 'Signature-Input')).toBe(
      `sig1=("@method" "@path" "x-request-id" "content-type" "content-length" "content-digest");created=${created};keyid="${keys.ed25519.id}";alg="ed25519"`,
    );
    const rsa = await signed(RFC9421_RSA);
    expect(header(headers, 'Content-Digest')).toBe(header(rsa, 'Content-Digest'));
  });

  it('is a 64-byte Ed25519 signature over the RFC 9421 base, verified by http-message-signatures, failing on any change', async () => {
    const params = /^sig1=(.*)$/.exec(header(headers, 'Signature-Input'))![1]!;
    const base = [
      '"@method": POST',
      '"@path": /webhook/events',
      `"x-request-id": ${requestId}`,
      '"content-type": application/json',
      `"content-length": ${Buffer.byteLength(body)}`,
      `"content-digest": ${header(headers, 'Content-Digest')}`,
      `"@signature-params": ${params}`,
    ].join('\n');
    const signature = Buffer.from(/^sig1=:(.*):$/.exec(header(headers, 'Signature'))![1]!, 'base64');
    expect(signature).toHaveLength(64);
    expect(verify(null, Buffer.from(base), ed25519.publicKey, signature)).toBe(true);

    const request = asReceived(headers);
    expect(await verifyRfc9421Signature(request, ed25519.publicKey)).toBe(true);
    expect(
      await verifyRfc9421Signature({ ...request, body: Buffer.from(body.replace('s1', 's2')) }, ed25519.publicKey),
    ).toBe(false);
    expect(
      await verifyRfc9421Signature(
        { ...request, headers: { ...request.headers, 'x-request-id': 'other' } },
        ed25519.publicKey,
      ),
    ).toBe(false);
    expect(await verifyRfc9421Signature(request, generateKeyPairSync('ed25519').publicKey)).toBe(false);
    // The RSA key of the same keystore does not stand in for it, nor the Ed25519 key for an RSA signature.
    expect(await verifyRfc9421Signature(request, publicKey)).toBe(false);
    expect(await verifyRfc9421Signature(asReceived(await signed(RFC9421_RSA)), ed25519.publicKey)).toBe(false);
  });
});
