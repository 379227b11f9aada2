// A chargegate webhook receiver that verifies both signature profiles (README "For partners").
//
//   ISSUER=https://gateway.example PORT=7000 java Receiver.java
//
// JDK 17 only, no libraries (the JWKS and envelope fields are read with patterns to stay dependency-free; use your
// JSON library instead). Prints one JSON line per request: {"verified": true, "profile": ..., "kid": ...,
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
import java.security.spec.RSAPublicKeySpec;
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
      "^sig1=(\\(\"@method\" \"@path\" \"x-request-id\" \"content-type\" \"content-length\" \"content-digest\"\\);created=(\\d+);keyid=\"([^\"]*)\";alg=\"rsa-pss-sha512\")$");
  static final Pattern SIGNATURE = Pattern.compile("^sig1=:([A-Za-z0-9+/=]+):$");
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
      if (!"RSA".equals(field(k, "kty")) || (alg != null && !alg.startsWith("PS"))) continue;
      BigInteger n = new BigInteger(1, Base64.getUrlDecoder().decode(field(k, "n")));
      BigInteger e = new BigInteger(1, Base64.getUrlDecoder().decode(field(k, "e")));
      fetched.put(field(k, "kid"), KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(n, e)));
    }
    keys = fetched;
  }

  static boolean pssOk(PublicKey key, String base, byte[] signature, String hash, int salt) {
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

  static boolean fresh(String created) {
    return Math.abs(System.currentTimeMillis() / 1000 - Long.parseLong(created)) <= MAX_AGE_S;
  }

  static String header(HttpExchange exchange, String name) {
    String value = exchange.getRequestHeaders().getFirst(name);
    return value == null ? "" : value;
  }

  /** The kid that verified the request and its profile, or null. */
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
      if (keys.containsKey("sign") && pssOk(keys.get("sign"), base, signature, "SHA-256", 32)) return new String[] {"sign", "documented"};
      fetchKeys();
      List<String> kids = new ArrayList<>(keys.keySet());
      kids.sort((a, b) -> Boolean.compare(!"sign".equals(a), !"sign".equals(b)));
      for (String kid : kids) if (pssOk(keys.get(kid), base, signature, "SHA-256", 32)) return new String[] {kid, "documented"};
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
    return keys.containsKey(kid) && pssOk(keys.get(kid), base, signature, "SHA-512", 64) ? new String[] {kid, "rfc9421"} : null;
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
            : "{\"verified\":true,\"profile\":\"" + verified[1] + "\",\"kid\":\"" + verified[0] + "\",\"eventId\":\"" + field(text, "eventId") + "\",\"eventType\":\"" + field(text, "eventType") + "\"}");
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
