// A chargegate webhook receiver that verifies both signature profiles, rfc9421 with rsa-pss-sha512 or ed25519
// (docs/partners/webhooks.md#receivers-in-python-go-and-java).
//
//	ISSUER=https://gateway.example PORT=7000 go run receiver.go
//
// Standard library only. Prints one JSON line per request: {"verified": true, "profile": ..., "alg": ..., "kid": ...,
// "eventId": ..., "eventType": ...}; answers 204 to a genuine request and 401 to anything else. Keys come from
// the gateway's JWKS and are fetched again when a signature names a key not seen yet or does not verify, which
// carries it across a key rotation.
package main

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

const maxAgeS = 300

var (
	issuer     = envOr("ISSUER", "http://127.0.0.1:8080")
	documented = regexp.MustCompile(`^sig1=created=(\d+);keyId="([^"]*)";alg="rsa-pss-sha256";headers="@method @path x-request-id"$`)
	rfc9421    = regexp.MustCompile(`^sig1=(\("@method" "@path" "x-request-id" "content-type" "content-length" "content-digest"\);created=(\d+);keyid="([^"]*)";alg="(rsa-pss-sha512|ed25519)")$`)
	signature  = regexp.MustCompile(`^sig1=:([A-Za-z0-9+/=]+):$`)

	mu   sync.Mutex
	keys = map[string]crypto.PublicKey{} // *rsa.PublicKey or ed25519.PublicKey
)

func envOr(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

func fetchKeys() error {
	response, err := http.Get(issuer + "/.well-known/jwks.json")
	if err != nil {
		return err
	}
	defer response.Body.Close()
	var jwks struct {
		Keys []struct{ Kid, Kty, Crv, Use, Alg, N, E, X string } `json:"keys"`
	}
	if err := json.NewDecoder(response.Body).Decode(&jwks); err != nil {
		return err
	}
	fetched := map[string]crypto.PublicKey{}
	for _, k := range jwks.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		switch {
		case k.Kty == "RSA" && (k.Alg == "" || strings.HasPrefix(k.Alg, "PS")):
			n, errN := base64.RawURLEncoding.DecodeString(k.N)
			e, errE := base64.RawURLEncoding.DecodeString(k.E)
			if errN == nil && errE == nil {
				fetched[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
			}
		case k.Kty == "OKP" && k.Crv == "Ed25519" && (k.Alg == "" || k.Alg == "EdDSA"):
			if x, err := base64.RawURLEncoding.DecodeString(k.X); err == nil && len(x) == ed25519.PublicKeySize {
				fetched[k.Kid] = ed25519.PublicKey(x)
			}
		}
	}
	keys = fetched
	return nil
}

func pssOK(key crypto.PublicKey, base string, sig []byte, hash crypto.Hash, salt int) bool {
	rsaKey, isRSA := key.(*rsa.PublicKey)
	if !isRSA {
		return false
	}
	var digest []byte
	if hash == crypto.SHA256 {
		sum := sha256.Sum256([]byte(base))
		digest = sum[:]
	} else {
		sum := sha512.Sum512([]byte(base))
		digest = sum[:]
	}
	return rsa.VerifyPSS(rsaKey, hash, digest, sig, &rsa.PSSOptions{SaltLength: salt, Hash: hash}) == nil
}

func ed25519OK(key crypto.PublicKey, base string, sig []byte) bool {
	edKey, isEd := key.(ed25519.PublicKey)
	return isEd && ed25519.Verify(edKey, []byte(base), sig)
}

func fresh(created string) bool {
	at, err := strconv.ParseInt(created, 10, 64)
	return err == nil && time.Since(time.Unix(at, 0)).Abs() <= maxAgeS*time.Second
}

// verify returns the kid that verified the request, its profile and algorithm, or "" when none did.
func verify(r *http.Request, body []byte) (string, string, string) {
	mu.Lock()
	defer mu.Unlock()
	sigMatch := signature.FindStringSubmatch(r.Header.Get("Signature"))
	if sigMatch == nil {
		return "", "", ""
	}
	sig, err := base64.StdEncoding.DecodeString(sigMatch[1])
	if err != nil {
		return "", "", ""
	}
	path := r.URL.Path
	if path == "" {
		path = "/"
	}
	if m := documented.FindStringSubmatch(r.Header.Get("Signature-Input")); m != nil {
		if !fresh(m[1]) {
			return "", "", ""
		}
		base := strings.Join([]string{
			`"@method": ` + r.Method,
			`"@path": ` + path,
			`"x-request-id": ` + r.Header.Get("X-Request-Id"),
			fmt.Sprintf(`"@signature-params": ("@method" "@path" "x-request-id");created=%s;keyid="%s";alg="rsa-pss-sha256"`, m[1], m[2]),
		}, "\n")
		// The `sign` key first; then, after fetching the JWKS again, every key (one signed just before a rotation).
		for attempt := 0; attempt < 2; attempt++ {
			kids := make([]string, 0, len(keys))
			for kid := range keys {
				kids = append(kids, kid)
			}
			sort.SliceStable(kids, func(i, j int) bool { return kids[i] == "sign" && kids[j] != "sign" })
			for i, kid := range kids {
				if attempt == 0 && i > 0 {
					break
				}
				if pssOK(keys[kid], base, sig, crypto.SHA256, 32) {
					return kid, "documented", "rsa-pss-sha256"
				}
			}
			if attempt == 0 {
				_ = fetchKeys()
			}
		}
		return "", "", ""
	}
	m := rfc9421.FindStringSubmatch(r.Header.Get("Signature-Input"))
	if m == nil || !fresh(m[2]) {
		return "", "", ""
	}
	sum := sha256.Sum256(body)
	digest := "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
	if r.Header.Get("Content-Digest") != digest {
		return "", "", ""
	}
	base := strings.Join([]string{
		`"@method": ` + r.Method,
		`"@path": ` + path,
		`"x-request-id": ` + r.Header.Get("X-Request-Id"),
		`"content-type": ` + r.Header.Get("Content-Type"),
		`"content-length": ` + r.Header.Get("Content-Length"),
		`"content-digest": ` + digest,
		`"@signature-params": ` + m[1],
	}, "\n")
	// The keyid is the key's own kid: fetch the JWKS again only for one not seen yet.
	if _, known := keys[m[3]]; !known {
		_ = fetchKeys()
	}
	// The algorithm must be the key's: an Ed25519 kid never verifies an RSA signature, nor the reverse.
	key := keys[m[3]]
	if (m[4] == "ed25519" && ed25519OK(key, base, sig)) || (m[4] == "rsa-pss-sha512" && pssOK(key, base, sig, crypto.SHA512, 64)) {
		return m[3], "rfc9421", m[4]
	}
	return "", "", ""
}

func main() {
	if err := fetchKeys(); err != nil {
		fmt.Fprintln(os.Stderr, "JWKS:", err)
		os.Exit(1)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:"+envOr("PORT", "7000"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := json.NewEncoder(os.Stdout)
	_ = out.Encode(map[string]int{"listening": listener.Addr().(*net.TCPAddr).Port})
	http.Serve(listener, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		kid, profile, alg := verify(r, body)
		line := map[string]any{"verified": kid != ""}
		if kid != "" {
			var event struct{ EventID, EventType string }
			_ = json.Unmarshal(body, &event)
			line["profile"], line["alg"], line["kid"], line["eventId"], line["eventType"] = profile, alg, kid, event.EventID, event.EventType
			w.WriteHeader(http.StatusNoContent)
		} else {
			w.WriteHeader(http.StatusUnauthorized)
		}
		_ = out.Encode(line)
	}))
}
