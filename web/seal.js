/* offprompt sealing, v1 (DESIGN §5): what a remote page posts instead of the values.
 *
 * A plain script, no modules and no build step, served only on remote pages. Globals:
 *   offpromptSealSupported()          -> whether this browser can seal here (WebCrypto, secure
 *                                        context)
 *   offpromptLinkKey(hash)            -> the 65-byte public point in "#k=<base64url>", or null
 *   offpromptCheckKey(point)          -> Promise<boolean>: the point is on P-256
 *   offpromptSeal(point, token, nonce, plaintext)
 *                                     -> Promise<"v1.<page point>.<iv>.<ciphertext+tag>">
 * The seal is ECDH P-256 with a fresh key pair of the page's own, HKDF-SHA256 (salt = the
 * token's 16 bytes, info "offprompt/v1/seal") and AES-256-GCM with a random 12-byte IV and AAD
 * "offprompt/v1|<token>|<nonce>"; offprompt/crypto/seal.py opens it.
 */
(function () {
  "use strict";

  var CURVE = { name: "ECDH", namedCurve: "P-256" };
  var B64U = /^[A-Za-z0-9_-]*$/;

  function b64uEncode(bytes) {
    var binary = "";
    for (var i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  // Only the canonical spelling decodes (as on the server), so a key has one text form.
  function b64uDecode(text) {
    if (!B64U.test(text) || text.length % 4 === 1) return null;
    var b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    while (b64.length % 4) b64 += "=";
    var binary;
    try {
      binary = atob(b64);
    } catch (e) {
      return null;
    }
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return b64uEncode(bytes) === text ? bytes : null;
  }

  function offpromptSealSupported() {
    return Boolean(globalThis.isSecureContext !== false && globalThis.crypto &&
      globalThis.crypto.subtle && globalThis.TextEncoder);
  }

  function offpromptLinkKey(hash) {
    var match = /^#k=([A-Za-z0-9_-]{87})$/.exec(hash || "");
    if (!match) return null;
    var point = b64uDecode(match[1]);
    return point && point.length === 65 && point[0] === 4 ? point : null;
  }

  function importPoint(point) {
    return crypto.subtle.importKey("raw", point, CURVE, false, []);
  }

  async function offpromptCheckKey(point) {
    try {
      await importPoint(point);
      return true;
    } catch (e) {
      return false;
    }
  }

  function tokenBytes(token) {
    if (!/^[0-9a-f]{32}$/.test(token)) throw new TypeError("a page token is 32 hex digits");
    var bytes = new Uint8Array(16);
    for (var i = 0; i < 16; i++) bytes[i] = parseInt(token.substr(i * 2, 2), 16);
    return bytes;
  }

  async function offpromptSeal(point, token, nonce, plaintext) {
    var encoder = new TextEncoder();
    var theirs = await importPoint(point);
    var mine = await crypto.subtle.generateKey(CURVE, false, ["deriveBits"]);
    var shared = await crypto.subtle.deriveBits({ name: "ECDH", public: theirs }, mine.privateKey, 256);
    var ikm = await crypto.subtle.importKey("raw", shared, "HKDF", false, ["deriveKey"]);
    var key = await crypto.subtle.deriveKey(
      { name: "HKDF", hash: "SHA-256", salt: tokenBytes(token), info: encoder.encode("offprompt/v1/seal") },
      ikm, { name: "AES-GCM", length: 256 }, false, ["encrypt"]
    );
    var iv = crypto.getRandomValues(new Uint8Array(12));
    var box = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv: iv, additionalData: encoder.encode("offprompt/v1|" + token + "|" + nonce) },
      key, encoder.encode(JSON.stringify(plaintext))
    );
    var pub = new Uint8Array(await crypto.subtle.exportKey("raw", mine.publicKey));
    return ["v1", b64uEncode(pub), b64uEncode(iv), b64uEncode(new Uint8Array(box))].join(".");
  }

  globalThis.offpromptSealSupported = offpromptSealSupported;
  globalThis.offpromptLinkKey = offpromptLinkKey;
  globalThis.offpromptCheckKey = offpromptCheckKey;
  globalThis.offpromptSeal = offpromptSeal;
})();
