#!/usr/bin/env python3
"""A chargegate webhook receiver that verifies both signature profiles, rfc9421 with rsa-pss-sha512 or ed25519
(docs/partners/webhooks.md#receivers-in-python-go-and-java).

ISSUER=https://gateway.example PORT=7000 python3 receiver.py

Needs only the standard library and `cryptography` (Debian: python3-cryptography). Prints one JSON line per
request: {"verified": true, "profile": ..., "alg": ..., "kid": ..., "eventId": ..., "eventType": ...}; answers 204 to a
genuine request and 401 to anything else. Keys come from the gateway's JWKS and are fetched again when a
signature names a key not seen yet or does not verify, which carries it across a key rotation.
"""
import base64
import hashlib
import json
import os
import re
import sys
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa

ISSUER = os.environ.get("ISSUER", "http://127.0.0.1:8080")
PORT = int(os.environ.get("PORT", "7000"))
MAX_AGE_S = 300

DOCUMENTED = re.compile(r'^sig1=created=(\d+);keyId="([^"]*)";alg="rsa-pss-sha256";headers="@method @path x-request-id"$')
RFC9421 = re.compile(
    r'^sig1=(\("@method" "@path" "x-request-id" "content-type" "content-length" "content-digest"\)'
    r';created=(\d+);keyid="([^"]*)";alg="(rsa-pss-sha512|ed25519)")$'
)
SIGNATURE = re.compile(r"^sig1=:([A-Za-z0-9+/=]+):$")

keys = {}  # kid -> RSA or Ed25519 public key


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_key(jwk):
    """An RSA (PS256) or Ed25519 (EdDSA) signing key of the JWKS, or None for any other."""
    if jwk.get("use", "sig") != "sig":
        return None
    if jwk.get("kty") == "RSA" and jwk.get("alg", "PS256").startswith("PS"):
        e, n = (int.from_bytes(b64url(jwk[m]), "big") for m in ("e", "n"))
        return rsa.RSAPublicNumbers(e, n).public_key()
    if jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519" and jwk.get("alg", "EdDSA") == "EdDSA":
        return ed25519.Ed25519PublicKey.from_public_bytes(b64url(jwk["x"]))
    return None


def fetch_keys():
    global keys
    with urllib.request.urlopen(ISSUER + "/.well-known/jwks.json", timeout=10) as response:
        jwks = json.load(response)
    keys = {k["kid"]: key for k in jwks["keys"] if (key := public_key(k)) is not None}


def pss_ok(key, base, signature, hash_algorithm, salt):
    if not isinstance(key, rsa.RSAPublicKey):
        return False
    try:
        key.verify(signature, base.encode(), padding.PSS(mgf=padding.MGF1(hash_algorithm), salt_length=salt), hash_algorithm)
        return True
    except InvalidSignature:
        return False


def ed25519_ok(key, base, signature):
    if not isinstance(key, ed25519.Ed25519PublicKey):
        return False
    try:
        key.verify(signature, base.encode())
        return True
    except InvalidSignature:
        return False


def verify(method, path, headers, body):
    """The kid that verified the request, its profile and algorithm, or None."""
    signature = SIGNATURE.match(headers.get("signature", ""))
    if not signature:
        return None
    signature = base64.b64decode(signature.group(1))
    documented = DOCUMENTED.match(headers.get("signature-input", ""))
    if documented:
        created, key_id = documented.group(1), documented.group(2)
        base = "\n".join([
            f'"@method": {method}',
            f'"@path": {path}',
            f'"x-request-id": {headers.get("x-request-id", "")}',
            f'"@signature-params": ("@method" "@path" "x-request-id");created={created};keyid="{key_id}";alg="rsa-pss-sha256"',
        ])
        if abs(time.time() - int(created)) > MAX_AGE_S:
            return None
        # The `sign` key first; then, after fetching the JWKS again, every key (one signed just before a rotation).
        for attempt in range(2):
            candidates = sorted(keys.items(), key=lambda item: item[0] != "sign")
            for kid, key in candidates if attempt else candidates[:1]:
                if pss_ok(key, base, signature, hashes.SHA256(), 32):
                    return kid, "documented", "rsa-pss-sha256"
            if attempt == 0:
                fetch_keys()
        return None
    rfc9421 = RFC9421.match(headers.get("signature-input", ""))
    if not rfc9421:
        return None
    params, created, key_id, alg = rfc9421.groups()
    digest = "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"
    if headers.get("content-digest") != digest or abs(time.time() - int(created)) > MAX_AGE_S:
        return None
    base = "\n".join([
        f'"@method": {method}',
        f'"@path": {path}',
        f'"x-request-id": {headers.get("x-request-id", "")}',
        f'"content-type": {headers.get("content-type", "")}',
        f'"content-length": {headers.get("content-length", "")}',
        f'"content-digest": {digest}',
        f'"@signature-params": {params}',
    ])
    # The keyid is the key's own kid: fetch the JWKS again only for one not seen yet.
    if key_id not in keys:
        fetch_keys()
    key = keys.get(key_id)
    # The algorithm must be the key's: an Ed25519 kid never verifies an RSA signature, nor the reverse.
    ok = ed25519_ok(key, base, signature) if alg == "ed25519" else pss_ok(key, base, signature, hashes.SHA512(), 64)
    return (key_id, "rfc9421", alg) if ok else None


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {name.lower(): value for name, value in self.headers.items()}
        verified = verify("POST", urlsplit(self.path).path or "/", headers, body)
        line = {"verified": verified is not None}
        if verified:
            event = json.loads(body)
            line.update(
                profile=verified[1], alg=verified[2], kid=verified[0], eventId=event["eventId"], eventType=event["eventType"]
            )
        print(json.dumps(line), flush=True)
        self.send_response(204 if verified else 401)
        self.end_headers()

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    fetch_keys()
    server = HTTPServer(("127.0.0.1", PORT), Receiver)
    print(json.dumps({"listening": server.server_address[1]}), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)
