/* offprompt page fields: generated values, show/hide, blanks around a value, live rule lines
 * and the button's
 * words. Shared with fill.js and page.js through one global, offpromptPage.
 *
 * Rule lines come from the registry's data injected as #page-data and web/rules.js. A value
 * is only ever read from its textarea and compared; nothing here sends or stores it.
 */
(function () {
  "use strict";

  document.documentElement.classList.add("js");
  var form = document.getElementById("collect");
  if (!form) return;
  form.noValidate = true;

  // Blanks a copied key often carries at its ends. The server writes a value exactly as sent
  // (DESIGN §8), so the page points them out and drops them only when the person asks.
  var LEAD = /^[\s\u200b]+/;
  var TAIL = /[\s\u200b]+$/;
  // The server's "empty": offprompt/submit.py _is_blank.
  var BLANK = /^[ \t\r\n]*$/;
  var data = JSON.parse(document.getElementById("page-data").textContent);
  var enforced = data.enforced || [];
  var submitText = document.getElementById("submit-text");
  var revealAll = document.getElementById("reveal-all");
  var timers = {};
  var made = {};

  function fields() {
    return Array.prototype.slice.call(form.querySelectorAll("textarea.value"));
  }
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }
  function box(area) { return area.closest(".field"); }
  function tool(area, name) { return box(area).querySelector("button." + name); }

  // What is sent, checked, written and fingerprinted: the textarea's value, exactly.
  function sent(area) { return area.value; }
  function blank(value) { return BLANK.test(value); }
  function generates(area) {
    return area.hasAttribute("data-generate-bytes") || area.hasAttribute("data-regen-bytes");
  }
  // A field filled from the keyring on the server is not asked for (web/keyring.js).
  function required(area) {
    return !generates(area) && !(globalThis.offpromptKeyring && offpromptKeyring(area));
  }

  // -- generated values, made here so the person sees (and may replace) what will be written
  function encode(bytes, encoding) {
    var i;
    if (encoding === "hex") {
      var hex = "";
      for (i = 0; i < bytes.length; i++) hex += (bytes[i] < 16 ? "0" : "") + bytes[i].toString(16);
      return hex;
    }
    var binary = "";
    for (i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    var b64 = btoa(binary);
    if (encoding === "base64") return b64;
    return b64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function generate(area) {
    var kind = area.hasAttribute("data-generate-bytes") ? "generate" : "regen";
    var n = parseInt(area.getAttribute("data-" + kind + "-bytes"), 10);
    var value = encode(crypto.getRandomValues(new Uint8Array(n)),
      area.getAttribute("data-" + kind + "-encoding"));
    made[area.name] = value;
    set(area, value);
  }

  // -- rule lines: pending while typing, then pass or fail
  function verdict(area) {
    var field = data.fields[area.name];
    if (!field || !globalThis.offpromptCheck || blank(area.value)) return null;
    var value = sent(area);
    return globalThis.offpromptCheck(field, value, data.hints);
  }
  function showRules(area, pending) {
    var list = document.getElementById("r-" + area.name);
    if (!list) return;
    var result = pending ? null : verdict(area);
    var items = list.querySelectorAll("li.rule");
    var empty = blank(area.value);
    Array.prototype.forEach.call(items, function (item, i) {
      var line = result && result.lines[i];
      var state = empty ? "" : pending ? "pending" : line && line.passed ? "pass" : "fail";
      item.className = "rule" + (state ? " " + state : "");
      item.querySelector(".state").textContent =
        { "": "", pending: "checking: ", pass: "passes: ", fail: "does not pass: " }[state];
      item.querySelector(".detail").textContent =
        state === "fail" && line.detail ? " (" + line.detail + ")" : "";
    });
    var hint = list.querySelector(".wrong-key");
    var text = result && result.hint ? result.hint : "";
    hint.textContent = text;
    hint.hidden = !text;
  }
  function failing(area) {
    if (enforced.indexOf(area.name) < 0) return false;
    var result = verdict(area);
    return Boolean(result && !result.ok);
  }

  // -- blanks around a value: shown, written unless the person removes them
  var KINDS = [
    [/ /g, "a space", "spaces"],
    [/\t/g, "a tab", "tabs"],
    [/[\n\r\u2028\u2029]/g, "a line break", "line breaks"],
    [/[^ \t\n\r\u2028\u2029]/g, "an invisible character", "invisible characters"],
  ];
  function describe(run) {
    var parts = [];
    KINDS.forEach(function (kind) {
      var n = (run.match(kind[0]) || []).length;
      if (n) parts.push(n === 1 ? kind[1] : n + " " + kind[2]);
    });
    if (parts.length < 2) return parts.join("");
    return parts.slice(0, -1).join(", ") + " and " + parts[parts.length - 1];
  }
  // The blanks at each end worth pointing out. A file's one final line break is how text files
  // end, so a file sink keeps it out of the note and out of what Remove drops.
  function edges(area) {
    var value = area.value;
    if (blank(area.value)) return { lead: "", tail: "", keep: "" };
    var tail = (value.match(TAIL) || [""])[0];
    var keep = data.file_sink && /\n$/.test(tail) ? "\n" : "";
    return {
      lead: (value.match(LEAD) || [""])[0],
      tail: tail.slice(0, tail.length - keep.length),
      keep: keep,
    };
  }
  function showBlanks(area) {
    var note = document.getElementById("b-" + area.name);
    var e = edges(area);
    var text = "";
    if (e.lead && e.tail) {
      text = "It starts with " + describe(e.lead) + " and ends with " + describe(e.tail);
    } else if (e.lead || e.tail) {
      text = "It " + (e.lead ? "starts" : "ends") + " with " + describe(e.lead || e.tail);
    }
    note.querySelector(".blanks-why").textContent =
      text ? text + ", written as part of the value." : "";
    note.querySelector(".blanks-do").textContent =
      (e.lead + e.tail).length === 1 ? "Remove it" : "Remove them";
    note.hidden = !text;
  }
  function removeBlanks(area) {
    var e = edges(area);
    var value = area.value;
    set(area, value.slice(e.lead.length, value.length - e.tail.length - e.keep.length) + e.keep);
  }

  // -- the button says what is left
  function problems() {
    var missing = [];
    var wrong = [];
    fields().forEach(function (area) {
      if (blank(area.value)) {
        if (required(area)) missing.push(area);
      } else if (failing(area)) {
        wrong.push(area);
      }
    });
    return { missing: missing, failing: wrong };
  }
  function update() {
    var p = problems();
    submitText.replaceChildren();
    if (p.missing.length) {
      submitText.textContent = "Fill " + plural(p.missing.length, "value") + " to write";
    } else if (p.failing.length) {
      submitText.textContent = "Fix " + plural(p.failing.length, "value") + " to write";
    } else if (!data.dest) {
      // Sink "none": only the destinations below.
      submitText.textContent = "Send";
    } else {
      submitText.append("Write to ", el("span", "mono", data.dest));
      if (data.sends) submitText.append(" and send");
    }
  }

  function refresh(area, pending) {
    clearTimeout(timers[area.name]);
    showBlanks(area);
    showRules(area, pending);
    if (pending) {
      timers[area.name] = setTimeout(function () { showRules(area, false); }, 700);
    }
    update();
  }
  function set(area, value) {
    area.value = value;
    refresh(area, false);
  }

  function reveal(area, shown) {
    var button = tool(area, "reveal");
    if (!button) return;
    area.classList.toggle("masked", !shown);
    button.setAttribute("aria-pressed", shown ? "true" : "false");
    button.textContent = shown ? "Hide" : "Show";
  }
  function syncRevealAll() {
    var masked = form.querySelectorAll("button.reveal[aria-pressed=false]").length;
    revealAll.setAttribute("aria-pressed", masked ? "false" : "true");
    revealAll.textContent = masked ? "Show all" : "Hide all";
  }

  function submit() {
    if (form.requestSubmit) form.requestSubmit(); else document.getElementById("submit").click();
  }

  fields().forEach(function (area) {
    var regen = tool(area, "regen");
    if (area.hasAttribute("data-generate-bytes") && area.value === "") generate(area);
    if (regen) {
      regen.hidden = false;
      regen.addEventListener("click", function () {
        generate(area);
        regen.textContent = "Regenerate";
      });
    }
    var show = tool(area, "reveal");
    if (show) {
      show.hidden = false;
      show.addEventListener("click", function () {
        reveal(area, area.classList.contains("masked"));
        syncRevealAll();
      });
    }
    tool(area, "trim").addEventListener("click", function () {
      removeBlanks(area);
      area.focus();
    });
    area.addEventListener("input", function () { refresh(area, true); });
    area.addEventListener("keydown", function (event) {
      if (event.key !== "Enter" || event.isComposing) return;
      if (event.ctrlKey || event.metaKey) {
        event.preventDefault();
        submit();
      } else if (area.hasAttribute("data-single-line") && !event.shiftKey) {
        // Enter moves on to the next empty field, and writes once none is left.
        event.preventDefault();
        var next = problems().missing.filter(function (a) { return a !== area; })[0];
        if (next && !blank(area.value)) next.focus(); else submit();
      }
    });
    refresh(area, false);
  });

  form.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) &&
        !(event.target instanceof HTMLTextAreaElement)) {
      event.preventDefault();
      submit();
    }
  });

  if (form.querySelector("button.reveal")) {
    revealAll.hidden = false;
    revealAll.addEventListener("click", function () {
      var show = revealAll.getAttribute("aria-pressed") !== "true";
      fields().forEach(function (area) { reveal(area, show); });
      syncRevealAll();
    });
  }
  if (/Mac|iPhone|iPad/.test(navigator.platform || "")) {
    document.querySelector("#kbd kbd").textContent = "⌘";
  }
  update();

  globalThis.offpromptPage = {
    form: form,
    data: data,
    fields: fields,
    sent: sent,
    blank: blank,
    problems: problems,
    set: set,
    update: update,
    showRules: showRules,
    // Names whose value is still the one this page generated.
    generatedHere: function () {
      return fields().filter(function (a) { return made[a.name] && a.value === made[a.name]; })
        .map(function (a) { return a.name; });
    },
    el: el,
    plural: plural,
  };
})();
