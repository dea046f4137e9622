/* offprompt fingerprint, v1 (DESIGN §7): the same four emoji the server computes.
 *
 * A plain script, no modules and no build step. It defines three globals:
 *   offpromptFingerprint(fpKeyBytes, pairs, table) -> Promise<{indices, emoji, names}>
 *   offpromptFpKeyToB64u(bytes)  -> the 43-character base64url form of a 32-byte key
 *   offpromptNewFpKey()          -> a fresh Uint8Array(32) from crypto.getRandomValues
 * `table` is offprompt.crypto.fingerprint.EMOJI as JSON, injected by the page server; it is
 * never copied here, so the page and the server cannot drift apart.
 */
(function () {
  "use strict";

  var PREFIX = "offprompt/fingerprint/v1\n";
  // A high surrogate not followed by a low one, or a low one not preceded by a high one.
  // (String.prototype.isWellFormed says the same but is missing from older browsers.)
  var LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/;

  function checkKey(fpKeyBytes) {
    if (!ArrayBuffer.isView(fpKeyBytes) || fpKeyBytes.byteLength !== 32) {
      throw new TypeError("a fingerprint key is a Uint8Array of exactly 32 bytes");
    }
  }

  // JSON.stringify of strings matches Python's json.dumps(..., separators=(",", ":"),
  // ensure_ascii=False): both write \" \\ \b \f \n \r \t, other C0 controls as lowercase
  // \u00xx, and everything else (U+007F, U+2028/2029, non-ASCII) literally. They differ only
  // on lone surrogates, which no form submission or UTF-8 file can hold; refuse them here
  // rather than produce a fingerprint the server can never match.
  function message(pairs) {
    var list = [];
    for (var i = 0; i < pairs.length; i++) {
      var name = pairs[i][0];
      var value = pairs[i][1];
      if (typeof name !== "string" || typeof value !== "string") {
        throw new TypeError("names and values are strings");
      }
      if (LONE_SURROGATE.test(name) || LONE_SURROGATE.test(value)) {
        throw new TypeError("a value holds a lone surrogate");
      }
      list.push([name, value]);
    }
    return new TextEncoder().encode(PREFIX + JSON.stringify(list));
  }

  async function offpromptFingerprint(fpKeyBytes, pairs, table) {
    checkKey(fpKeyBytes);
    if (!table || table.length !== 64) {
      throw new TypeError("the emoji table has exactly 64 entries");
    }
    var key = await crypto.subtle.importKey(
      "raw", fpKeyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]
    );
    var mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, message(pairs)));
    var n = (mac[0] << 16) | (mac[1] << 8) | mac[2];
    var indices = [(n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63];
    return {
      indices: indices,
      emoji: indices.map(function (i) { return table[i][0]; }),
      names: indices.map(function (i) { return table[i][1]; }),
    };
  }

  function offpromptFpKeyToB64u(bytes) {
    checkKey(bytes);
    var binary = "";
    for (var i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function offpromptNewFpKey() {
    return crypto.getRandomValues(new Uint8Array(32));
  }

  globalThis.offpromptFingerprint = offpromptFingerprint;
  globalThis.offpromptFpKeyToB64u = offpromptFpKeyToB64u;
  globalThis.offpromptNewFpKey = offpromptNewFpKey;
})();
