/* offprompt rules engine, the page's half: the same verdicts, lines and hints as
 * offprompt/registry/rules.py and checks.py, read off the JSON the page server injects.
 *
 * A plain script, no modules and no build step. It defines one global:
 *   offpromptCheck(field, value, hints) -> {ok, lines: [{rule_id, text, passed, detail}], hint}
 * `field` is one entry of registry.page_data(...)["fields"] (null accepts anything) and `hints`
 * is its ["hints"]. Pass the value exactly as it is sent: the server checks it untrimmed.
 * Lengths and positions count code points, as Python does. Lines carry rule texts, counts and
 * registry prefixes only, never a piece of the value. Any change here must be made in the
 * Python engine too: tests/unit/registry runs one table through both.
 */
(function (root) {
  "use strict";

  var QUOTES = [0x22, 0x27, 0x60, 0x2018, 0x2019, 0x201c, 0x201d];
  var MAX_DEPTH = 512;
  var compiled = {};

  function codePoints(s) {
    var out = [];
    for (var i = 0; i < s.length; i++) {
      var c = s.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
        var d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          out.push((c - 0xd800) * 0x400 + (d - 0xdc00) + 0x10000);
          i++;
          continue;
        }
      }
      out.push(c);
    }
    return out;
  }

  // --- JSON: RFC 8259 grammar only, decided by hand so both runtimes agree (checks.json_error).

  function isDigit(c) { return c >= 0x30 && c <= 0x39; }
  function isHex(c) {
    return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
  }

  function ws(a, i) {
    while (i < a.length && (a[i] === 0x20 || a[i] === 0x09 || a[i] === 0x0a || a[i] === 0x0d)) i++;
    return i;
  }

  function stringEnd(a, i) {
    var n = a.length;
    var k = i + 1;
    while (k < n) {
      var c = a[k];
      if (c === 0x22) return k + 1;
      if (c === 0x5c) {
        if (k + 1 >= n) return ~(k + 1);
        var e = a[k + 1];
        if (e === 0x75) {
          for (var j = k + 2; j < k + 6; j++) {
            if (j >= n || !isHex(a[j])) return ~j;
          }
          k += 6;
        } else if ([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74].indexOf(e) >= 0) {
          k += 2;
        } else {
          return ~(k + 1);
        }
      } else if (c < 0x20) {
        return ~k;
      } else {
        k += 1;
      }
    }
    return ~k;
  }

  function digits(a, i) {
    while (i < a.length && isDigit(a[i])) i++;
    return i;
  }

  function numberEnd(a, i) {
    var n = a.length;
    var k = i < n && a[i] === 0x2d ? i + 1 : i;
    var j;
    if (k < n && a[k] === 0x30) {
      k += 1;
    } else if (k < n && a[k] >= 0x31 && a[k] <= 0x39) {
      k = digits(a, k);
    } else {
      return ~k;
    }
    if (k < n && a[k] === 0x2e) {
      j = digits(a, k + 1);
      if (j === k + 1) return ~j;
      k = j;
    }
    if (k < n && (a[k] === 0x65 || a[k] === 0x45)) {
      k += 1;
      if (k < n && (a[k] === 0x2b || a[k] === 0x2d)) k += 1;
      j = digits(a, k);
      if (j === k) return ~j;
      k = j;
    }
    return k;
  }

  function startsAt(a, i, word) {
    for (var j = 0; j < word.length; j++) {
      if (a[i + j] !== word.charCodeAt(j)) return false;
    }
    return true;
  }

  function scalarEnd(a, i) {
    if (i >= a.length) return ~i;
    var c = a[i];
    if (c === 0x22) return stringEnd(a, i);
    var words = ["true", "false", "null"];
    for (var w = 0; w < words.length; w++) {
      if (c === words[w].charCodeAt(0)) {
        return startsAt(a, i, words[w]) ? i + words[w].length : ~i;
      }
    }
    if (c === 0x2d || isDigit(c)) return numberEnd(a, i);
    return ~i;
  }

  function keyEnd(a, i) {
    if (i >= a.length || a[i] !== 0x22) return ~i;
    var j = stringEnd(a, i);
    if (j < 0) return j;
    j = ws(a, j);
    if (j >= a.length || a[j] !== 0x3a) return ~j;
    return ws(a, j + 1);
  }

  function jsonError(s) {
    var a = codePoints(s);
    var n = a.length;
    var stack = [];
    var i = ws(a, 0);
    for (;;) {
      if (i < n && (a[i] === 0x7b || a[i] === 0x5b)) {
        if (stack.length >= MAX_DEPTH) return i;
        var opener = a[i];
        stack.push(opener);
        i = ws(a, i + 1);
        if (i < n && a[i] === (opener === 0x7b ? 0x7d : 0x5d)) {
          stack.pop();
          i += 1;
        } else {
          if (opener === 0x7b) {
            i = keyEnd(a, i);
            if (i < 0) return ~i;
          }
          continue;
        }
      } else {
        i = scalarEnd(a, i);
        if (i < 0) return ~i;
      }
      // After a value: close containers, or take a comma and go on to the next value.
      for (;;) {
        i = ws(a, i);
        if (stack.length === 0) return i === n ? null : i;
        var top = stack[stack.length - 1];
        if (i < n && a[i] === 0x2c) {
          i = ws(a, i + 1);
          if (top === 0x7b) {
            i = keyEnd(a, i);
            if (i < 0) return ~i;
          }
          break;
        }
        if (i < n && a[i] === (top === 0x7b ? 0x7d : 0x5d)) {
          stack.pop();
          i += 1;
          continue;
        }
        return i;
      }
    }
  }

  // --- The other hand-written checks (checks.py).

  function pemLabelEnd(s) {
    if (!s.startsWith("-----BEGIN ")) return -1;
    var j = s.indexOf("-----", 11);
    if (j <= 11) return -1;
    for (var k = 11; k < j; k++) {
      var c = s.charCodeAt(k);
      if (!((c >= 0x41 && c <= 0x5a) || isDigit(c) || c === 0x20)) return -1;
    }
    return j;
  }

  function pemEnd(s) {
    var j = pemLabelEnd(s);
    return j >= 0 && s.indexOf("-----END " + s.slice(11, j) + "-----", j + 5) >= 0;
  }

  function urlHost(s) {
    var i = s.indexOf("://");
    if (i < 0) return false;
    var rest = s.slice(i + 3);
    var end = rest.length;
    ["/", "?", "#"].forEach(function (c) {
      var k = rest.indexOf(c);
      if (k >= 0 && k < end) end = k;
    });
    var at = end > 0 ? rest.lastIndexOf("@", end - 1) : -1;
    var hostport = rest.slice(at + 1, end);
    var host;
    if (hostport.startsWith("[")) {
      var close = hostport.indexOf("]");
      host = close > 0 ? hostport.slice(1, close) : "";
    } else {
      var colon = hostport.indexOf(":");
      host = colon < 0 ? hostport : hostport.slice(0, colon);
    }
    return host !== "" || rest.indexOf("host=", end) >= 0;
  }

  var CODE = {
    json: function (s) { return jsonError(s) === null; },
    pem_begin: function (s) { return pemLabelEnd(s) >= 0; },
    pem_end: pemEnd,
    url_host: urlHost,
  };

  function formatPasses(rule, value) {
    if (Object.prototype.hasOwnProperty.call(CODE, rule.check)) return CODE[rule.check](value);
    var re = compiled[rule.pattern];
    if (!re) re = compiled[rule.pattern] = new RegExp("^(?:" + rule.pattern + ")$");
    return re.test(value);
  }

  function formatDetail(check, value) {
    if (check === "json") {
      var pos = jsonError(value);
      return pos === null ? null : "it breaks at character " + (pos + 1);
    }
    if (check === "jwt") {
      var parts = value.split(".").length;
      if (parts !== 3) return "it has " + parts + " part" + (parts === 1 ? "" : "s");
    }
    return null;
  }

  // --- Rules (rules.py).

  function badChar(rule, value) {
    var a = codePoints(value);
    for (var i = 0; i < a.length; i++) {
      var ok = false;
      for (var r = 0; r < rule.ranges.length; r++) {
        if (rule.ranges[r][0] <= a[i] && a[i] <= rule.ranges[r][1]) { ok = true; break; }
      }
      if (!ok) return a[i];
    }
    return null;
  }

  function describe(cp) {
    if (cp === 0x20) return "it has a space";
    if (cp === 0x0a || cp === 0x0d || cp === 0x2028 || cp === 0x2029) return "it has a line break";
    if (cp === 0x09) return "it has a tab";
    if (QUOTES.indexOf(cp) >= 0) return "it has a quote mark";
    if (cp === 0x2026) return "it has an ellipsis (…), as in a placeholder";
    if (cp < 0x20 || cp === 0x7f) return "it has a control character";
    if (cp > 0x7f) return "it has a non-ASCII character";
    if (isDigit(cp) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a)) {
      return "it has a letter or digit outside the allowed set";
    }
    return 'it has "' + String.fromCharCode(cp) + '"';
  }

  function recognised(value, hints) {
    for (var i = 0; i < hints.length; i++) {
      if (value.startsWith(hints[i][0])) return hints[i][0];
    }
    return null;
  }

  function passes(rule, value) {
    switch (rule.kind) {
      case "prefix":
        return rule.prefixes.some(function (p) { return value.startsWith(p); });
      case "length":
        var n = codePoints(value).length;
        return rule.min <= n && n <= rule.max;
      case "charset":
        return badChar(rule, value) === null;
      case "format":
        return formatPasses(rule, value);
      default:
        return rule.options.some(function (o) { return passes(o, value); });
    }
  }

  function detail(rule, value, hints) {
    switch (rule.kind) {
      case "prefix":
        var known = recognised(value, hints);
        return known ? "it starts with " + known : null;
      case "length":
        var n = codePoints(value).length;
        return "it has " + n + " character" + (n === 1 ? "" : "s");
      case "charset":
        var bad = badChar(rule, value);
        return bad === null ? null : describe(bad);
      case "format":
        return formatDetail(rule.check, value);
      default:
        return null;
    }
  }

  function hint(field, value, hints) {
    if (field.provider === null) return null;
    var best = recognised(value, hints);
    if (best === null) return null;
    var owners = hints.filter(function (k) { return k[0] === best; });
    var mine = owners.some(function (k) {
      return k[1] === field.provider && k[2] === field.credential;
    });
    if (mine) return null;
    var same = owners.filter(function (k) { return k[1] === field.provider; });
    var k;
    if (same.length === 1) {
      k = same[0];
      if (k[5] === field.url) {
        return "That's the " + k[3] + " " + k[4] + "; use the " + field.noun +
          " from the same page.";
      }
      return "That's the " + k[3] + " " + k[4] + "; this field needs the " + field.noun + ".";
    }
    if (same.length === 0 && owners.length === 1) {
      k = owners[0];
      return "That looks like the " + k[3] + " " + k[4] + "; this field needs the " +
        field.provider_name + " " + field.noun + ".";
    }
    return null;
  }

  root.offpromptCheck = function (field, value, hints) {
    if (field === null || field === undefined) return { ok: true, lines: [], hint: null };
    var lines = field.rules.map(function (rule) {
      var ok = passes(rule, value);
      var why = ok ? null : detail(rule, value, hints);
      return { rule_id: rule.id, text: rule.text, passed: ok, detail: why };
    });
    var ok = lines.every(function (line) { return line.passed; });
    return { ok: ok, lines: lines, hint: hint(field, value, hints) };
  };
})(typeof window !== "undefined" ? window : globalThis);
