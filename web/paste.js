/* offprompt paste parser: a pasted or dropped .env read exactly as python-dotenv 1.2 reads a
 * file (`dotenv.parser.parse_stream`, before ${} interpolation). There is no python-dotenv in a
 * browser, so this is a port; tests/page/test_paste_parity.py holds it to python-dotenv itself.
 *
 * A plain script, no modules and no build step. It defines one global:
 *   offpromptParseDotenv(text) -> {entries: [[key, value or null], ...], bad: [line, ...]}
 * `entries` holds every statement with a key in text order (value null for a bare `KEY`);
 * `bad` the line numbers python-dotenv would skip (where each one's text starts).
 * tests/page/dotenv_cases.json runs one table through both: change them together.
 */
(function (root) {
  "use strict";

  // Python's \s (str.isspace), which differs from JavaScript's: no U+FEFF, but U+001C-001F
  // and U+0085. Every class below is spelled with it so both parsers split text alike.
  var SP = "\\t\\v\\f \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
  var WS = SP + "\\r\\n";
  function re(source) { return new RegExp(source, "y"); }
  var MULTILINE_WHITESPACE = re("[" + WS + "]*");
  var WHITESPACE = re("[" + SP + "]*");
  var EXPORT = re("(?:export[" + SP + "]+)?");
  var SINGLE_QUOTED_KEY = re("'([^']+)'");
  var UNQUOTED_KEY = re("([^=#" + WS + "]+)");
  var EQUAL_SIGN = re("(=[" + SP + "]*)");
  // A backslash always escapes the character after it, line breaks included (Python's DOTALL
  // `.` is [\s\S] here), so `\\` before a quote does not escape the quote.
  var SINGLE_QUOTED_VALUE = re("'((?:\\\\[\\s\\S]|[^'\\\\])*)'");
  var DOUBLE_QUOTED_VALUE = re('"((?:\\\\[\\s\\S]|[^"\\\\])*)"');
  var UNQUOTED_VALUE = re("([^\\r\\n]*)");
  var COMMENT = re("(?:[" + SP + "]*#[^\\r\\n]*)?");
  var END_OF_LINE = re("[" + SP + "]*(?:\\r\\n|\\n|\\r|$)");
  var REST_OF_LINE = re("[^\\r\\n]*(?:\\r|\\n|\\r\\n)?");
  var DOUBLE_QUOTE_ESCAPES = /\\[\\'"abfnrtv]/g;
  var SINGLE_QUOTE_ESCAPES = /\\[\\']/g;
  var UNQUOTED_COMMENT = new RegExp("[" + WS + "]+#[^\\n]*");
  var TRAILING = new RegExp("[" + WS + "]+$");
  var ESCAPES = { "\\": "\\", "'": "'", '"': '"', a: "\x07", b: "\b", f: "\f", n: "\n",
                  r: "\r", t: "\t", v: "\v" };
  var NO_MATCH = {};

  function match(pattern, text, pos) {
    pattern.lastIndex = pos;
    var m = pattern.exec(text);
    if (m === null) throw NO_MATCH;
    return m;
  }

  function end(m) { return m.index + m[0].length; }

  function toLf(s) { return s.replace(/\r\n/g, "\n").replace(/\r/g, "\n"); }

  function decode(pattern, raw) {
    return raw.replace(pattern, function (e) { return ESCAPES[e.charAt(1)]; });
  }

  function value(text, pos) {
    var m;
    if (text.charAt(pos) === "'") {
      m = match(SINGLE_QUOTED_VALUE, text, pos);
      return [decode(SINGLE_QUOTE_ESCAPES, m[1]), end(m)];
    }
    if (text.charAt(pos) === '"') {
      m = match(DOUBLE_QUOTED_VALUE, text, pos);
      return [decode(DOUBLE_QUOTE_ESCAPES, m[1]), end(m)];
    }
    if (pos >= text.length || text.charAt(pos) === "\r" || text.charAt(pos) === "\n") {
      return ["", pos];
    }
    m = match(UNQUOTED_VALUE, text, pos);
    return [m[1].replace(UNQUOTED_COMMENT, "").replace(TRAILING, ""), end(m)];
  }

  root.offpromptParseDotenv = function (raw) {
    // As python-dotenv reads a file: universal newlines (CRLF and CR become LF), and a leading
    // byte-order mark dropped.
    var text = toLf(raw);
    if (text.charAt(0) === "\ufeff") text = text.slice(1);
    var entries = [];
    var bad = [];
    var pos = 0;
    var n = text.length;
    var line = 1;
    var counted = 0;
    function lineOf(at) {
      for (; counted < at; counted++) if (text.charAt(counted) === "\n") line++;
      return line;
    }
    while (pos < n) {
      var mark = pos;
      pos = end(match(MULTILINE_WHITESPACE, text, pos));
      if (pos >= n) break;
      var blank = text.slice(mark, pos);
      var lineStart = mark + blank.lastIndexOf("\n") + 1;
      var key = null;
      var val = null;
      try {
        pos = end(match(EXPORT, text, pos));
        var m;
        if (text.charAt(pos) === "#") {
          key = null;
        } else if (text.charAt(pos) === "'") {
          m = match(SINGLE_QUOTED_KEY, text, pos);
          key = m[1];
          pos = end(m);
        } else {
          m = match(UNQUOTED_KEY, text, pos);
          key = m[1];
          pos = end(m);
        }
        pos = end(match(WHITESPACE, text, pos));
        if (text.charAt(pos) === "=") {
          var eq = match(EQUAL_SIGN, text, pos);
          pos = end(eq);
          if (eq[1].length > 1 && text.charAt(pos) === "#") {
            // `KEY= # note`: empty, and the rest is a comment.
            val = "";
          } else {
            var got = value(text, pos);
            val = got[0];
            pos = got[1];
          }
        }
        pos = end(match(COMMENT, text, pos));
        pos = end(match(END_OF_LINE, text, pos));
      } catch (e) {
        if (e !== NO_MATCH) throw e;
        bad.push(lineOf(lineStart));
        pos = end(match(REST_OF_LINE, text, pos));
        continue;
      }
      if (key !== null) entries.push([key, val]);
    }
    return { entries: entries, bad: bad };
  };
})(typeof window !== "undefined" ? window : globalThis);
