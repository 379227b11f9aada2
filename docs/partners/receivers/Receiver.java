// A chargegate webhook receiver that verifies both signature profiles, rfc9421 with rsa-pss-sha512 or ed25519
// (docs/partners/webhooks.md#receivers-in-python-go-and-java).
//
//   ISSUER=https://gateway.example PORT=7000 java Receiver.java
//
// JDK 17 only, no libraries (the JWKS and envelope fields are read with patterns to stay dependency-free; use your
// JSON library instead). Prints one JSON line per request: {"verified": true, "profile": ..., "alg": ..., "kid": ...,
// "eventId": ..., "eventType": ...}; answers 204 to a genuine request and 401 to anything else. Keys come from the
// gateway's JWKS and are fetched again when a signature names a key not seen yet or does not verify, which carries
// it across a key rotation.
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.MGF1ParameterSpec;
import java.security.spec.PSSParameterSpec;
import java.security.interfaces.EdECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.RSAPublicKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class Receiver {
  static final String ISSUER = System.getenv().getOrDefault("ISSUER", "http://127.0.0.1:8080");
  static final long MAX_AGE_S = 300;
  static final Pattern DOCUMENTED = Pattern.compile("^sig1=created=(\\d+);keyId=\"([^\"]*)\";alg=\"rsa-pss-sha256\";headers=\"@method @path x-request-id\"$");
  static final Pattern RFC9421 = Pattern.compile(
      "^sig1=(\\(\"@method\" \"@path\" \"x-request-id\" \"content-type\" \"content-length\" \"content-digest\"\\);created=(\\d+);keyid=\"([^\"]*)\";alg=\"(rsa-pss-sha512|ed25519)\")$");
  static final Pattern SIGNATURE = Pattern.compile("^sig1=:([A-Za-z0-9+/=]+):$");
  // An Ed25519 public key as X.509 SubjectPublicKeyInfo is this DER prefix, then the JWK's 32 bytes of x.
  static final byte[] ED25519_SPKI_PREFIX = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
  static Map<String, PublicKey> keys = new LinkedHashMap<>();

  static String field(String json, String name) {
    Matcher m = Pattern.compile("\"" + name + "\"\\s*:\\s*\"([^\"]*)\"").matcher(json);
    return m.find() ? m.group(1) : null;
  }

  static synchronized void fetchKeys() throws Exception {
    String jwks = HttpClient.newHttpClient()
        .send(HttpRequest.newBuilder(URI.create(ISSUER + "/.well-known/jwks.json")).build(), HttpResponse.BodyHandlers.ofString())
        .body();
    Map<String, PublicKey> fetched = new LinkedHashMap<>();
    Matcher jwk = Pattern.compile("\\{[^{}]*\\}").matcher(jwks.substring(jwks.indexOf('[')));
    while (jwk.find()) {
      String k = jwk.group();
      String alg = field(k, "alg");
      String use = field(k, "use");
      if (use != null && !"sig".equals(use)) continue;
      if ("RSA".equals(field(k, "kty")) && (alg == null || alg.startsWith("PS"))) {
        BigInteger n = new BigInteger(1, Base64.getUrlDecoder().decode(field(k, "n")));
        BigInteger e = new BigInteger(1, Base64.getUrlDecoder().decode(field(k, "e")));
        fetched.put(field(k, "kid"), KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(n, e)));
      } else if ("OKP".equals(field(k, "kty")) && "Ed25519".equals(field(k, "crv")) && (alg == null || "EdDSA".equals(alg))) {
        byte[] x = Base64.getUrlDecoder().decode(field(k, "x"));
        byte[] spki = new byte[ED25519_SPKI_PREFIX.length + x.length];
        System.arraycopy(ED25519_SPKI_PREFIX, 0, spki, 0, ED25519_SPKI_PREFIX.length);
        System.arraycopy(x, 0, spki, ED25519_SPKI_PREFIX.length, x.length);
        fetched.put(field(k, "kid"), KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(spki)));
      }
    }
    keys = fetched;
  }

  static boolean pssOk(PublicKey key, String base, byte[] signature, String hash, int salt) {
    if (!(key instanceof RSAPublicKey)) return false;
    try {
      Signature verifier = Signature.getInstance("RSASSA-PSS");
      verifier.setParameter(new PSSParameterSpec(hash, "MGF1", new MGF1ParameterSpec(hash), salt, 1));
      verifier.initVerify(key);
      verifier.update(base.getBytes(StandardCharsets.UTF_8));
      return verifier.verify(signature);
    } catch (Exception e) {
      return false;
    }
  }

  static boolean ed25519Ok(PublicKey key, String base, byte[] signature) {
    if (!(key instanceof EdECPublicKey)) return false;
    try {
      Signature verifier = Signature.getInstance("Ed25519");
      verifier.initVerify(key);
      verifier.update(base.getBytes(StandardCharsets.UTF_8));
      return verifier.verify(signature);
    } catch (Exception e) {
      return false;
    }
  }

  static boolean fresh(String created) {
    return Math.abs(System.currentTimeMillis() / 1000 - Long.parseLong(created)) <= MAX_AGE_S;
  }

  static String header(HttpExchange exchange, String name) {
    String value = exchange.getRequestHeaders().getFirst(name);
    return value == null ? "" : value;
  }

  /** The kid that verified the request, its profile and algorithm, or null. */
  static synchronized String[] verify(HttpExchange exchange, byte[] body) throws Exception {
    Matcher sig = SIGNATURE.matcher(header(exchange, "Signature"));
    if (!sig.matches()) return null;
    byte[] signature = Base64.getDecoder().decode(sig.group(1));
    String path = exchange.getRequestURI().getRawPath();
    if (path == null || path.isEmpty()) path = "/";
    Matcher documented = DOCUMENTED.matcher(header(exchange, "Signature-Input"));
    if (documented.matches()) {
      if (!fresh(documented.group(1))) return null;
      String base = String.join("\n",
          "\"@method\": " + exchange.getRequestMethod(),
          "\"@path\": " + path,
          "\"x-request-id\": " + header(exchange, "x-request-id"),
          "\"@signature-params\": (\"@method\" \"@path\" \"x-request-id\");created=" + documented.group(1) + ";keyid=\"" + documented.group(2) + "\";alg=\"rsa-pss-sha256\"");
      // The `sign` key first; then, after fetching the JWKS again, every key (one signed just before a rotation).
      if (keys.containsKey("sign") && pssOk(keys.get("sign"), base, signature, "SHA-256", 32)) return new String[] {"sign", "documented", "rsa-pss-sha256"};
      fetchKeys();
      List<String> kids = new ArrayList<>(keys.keySet());
      kids.sort((a, b) -> Boolean.compare(!"sign".equals(a), !"sign".equals(b)));
      for (String kid : kids) if (pssOk(keys.get(kid), base, signature, "SHA-256", 32)) return new String[] {kid, "documented", "rsa-pss-sha256"};
      return null;
    }
    Matcher rfc9421 = RFC9421.matcher(header(exchange, "Signature-Input"));
    if (!rfc9421.matches() || !fresh(rfc9421.group(2))) return null;
    String digest = "sha-256=:" + Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-256").digest(body)) + ":";
    if (!digest.equals(header(exchange, "Content-Digest"))) return null;
    String base = String.join("\n",
        "\"@method\": " + exchange.getRequestMethod(),
        "\"@path\": " + path,
        "\"x-request-id\": " + header(exchange, "x-request-id"),
        "\"content-type\": " + header(exchange, "Content-Type"),
        "\"content-length\": " + header(exchange, "Content-Length"),
        "\"content-digest\": " + digest,
        "\"@signature-params\": " + rfc9421.group(1));
    String kid = rfc9421.group(3);
    // The keyid is the key's own kid: fetch the JWKS again only for one not seen yet.
    if (!keys.containsKey(kid)) fetchKeys();
    String alg = rfc9421.group(4);
    // The algorithm must be the key's: an Ed25519 kid never verifies an RSA signature, nor the reverse.
    PublicKey key = keys.get(kid);
    boolean ok = "ed25519".equals(alg) ? ed25519Ok(key, base, signature) : pssOk(key, base, signature, "SHA-512", 64);
    return ok ? new String[] {kid, "rfc9421", alg} : null;
  }

  public static void main(String[] args) throws Exception {
    fetchKeys();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(System.getenv().getOrDefault("PORT", "7000"))), 0);
    server.createContext("/", exchange -> {
      try {
        byte[] body = exchange.getRequestBody().readAllBytes();
        String[] verified = verify(exchange, body);
        String text = new String(body, StandardCharsets.UTF_8);
        System.out.println(verified == null
            ? "{\"verified\":false}"
            : "{\"verified\":true,\"profile\":\"" + verified[1] + "\",\"alg\":\"" + verified[2] + "\",\"kid\":\"" + verified[0] + "\",\"eventId\":\"" + field(text, "eventId") + "\",\"eventType\":\"" + field(text, "eventType") + "\"}");
        System.out.flush();
        exchange.sendResponseHeaders(verified == null ? 401 : 204, -1);
      } catch (Exception e) {
        e.printStackTrace();
        exchange.sendResponseHeaders(500, -1);
      } finally {
        exchange.close();
      }
    });
    server.start();
    System.out.println("{\"listening\":" + server.getAddress().getPort() + "}");
    System.out.flush();
  }
}
