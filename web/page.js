/* offprompt page script: generated values, show/hide, and a fetch submit that keeps what was
 * typed on errors and compares the server's four emoji with the ones computed here.
 *
 * The page works without it (plain form post). It talks to nothing but its own origin, and
 * never puts a value anywhere but the textarea it came from and the request body.
 */
(function () {
  "use strict";

  document.documentElement.classList.add("js");

  var form = document.getElementById("collect");
  if (!form) return;

  var TRIM = /^[ \t\n]+|[ \t\n]+$/g;
  var table = JSON.parse(document.getElementById("emoji-table").textContent);
  var submitButton = document.getElementById("submit");
  var formError = document.getElementById("form-error");
  var expiry = document.getElementById("expiry");
  var trim = form.getAttribute("data-trim") === "1";
  var busy = false;
  var done = false;

  function fields() {
    return Array.prototype.slice.call(form.querySelectorAll("textarea.value"));
  }

  // Generated values, made here so the person sees (and could replace) what will be written.
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

  fields().forEach(function (area) {
    var n = parseInt(area.getAttribute("data-generate-bytes") || "", 10);
    if (n > 0 && area.value === "") {
      var bytes = crypto.getRandomValues(new Uint8Array(n));
      area.value = encode(bytes, area.getAttribute("data-generate-encoding"));
    }
    if (area.hasAttribute("data-single-line")) {
      area.addEventListener("keydown", function (event) {
        if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
          event.preventDefault();
          if (form.requestSubmit) form.requestSubmit(); else submitButton.click();
        }
      });
    }
  });

  Array.prototype.forEach.call(form.querySelectorAll("button.reveal"), function (button) {
    var area = document.getElementById(button.getAttribute("aria-controls"));
    button.hidden = false;
    button.addEventListener("click", function () {
      var shown = area.classList.toggle("masked") === false;
      button.setAttribute("aria-pressed", shown ? "true" : "false");
      button.textContent = shown ? "Hide" : "Show";
    });
  });

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function setFormError(text) {
    formError.textContent = text || "";
    formError.hidden = !text;
  }

  function clearErrors() {
    setFormError("");
    fields().forEach(function (area) {
      var list = document.getElementById("e-" + area.name);
      list.replaceChildren();
      list.hidden = true;
      area.removeAttribute("aria-invalid");
      area.closest(".field").classList.remove("invalid");
    });
    var notice = form.querySelector(".notice");
    if (notice) notice.remove();
  }

  function showErrors(errors) {
    var first = null;
    fields().forEach(function (area) {
      var reasons = errors[area.name];
      if (!reasons || !reasons.length) return;
      var list = document.getElementById("e-" + area.name);
      reasons.forEach(function (reason) { list.appendChild(el("li", "", reason)); });
      list.hidden = false;
      area.setAttribute("aria-invalid", "true");
      area.closest(".field").classList.add("invalid");
      if (!first) first = area;
    });
    return first;
  }

  function values() {
    return fields().map(function (area) {
      var value = area.value.replace(/\r\n?/g, "\n");
      return [area.name, trim ? value.replace(TRIM, "") : value];
    });
  }

  function finish(main) {
    done = true;
    fields().forEach(function (area) { area.value = ""; });
    var card = form.closest("main");
    var brand = card.querySelector(".brand");
    card.replaceChildren(brand, main);
    var heading = main.querySelector("h1");
    if (heading) {
      heading.tabIndex = -1;
      heading.focus();
    }
  }

  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  function writtenView(data, mine) {
    var section = el("section", "written");
    section.id = "written";
    var heading = el("h1", "", " Written");
    var tick = el("span", "", "✓");
    tick.setAttribute("aria-hidden", "true");
    heading.prepend(tick);
    section.appendChild(heading);

    var summary = el("p");
    var written = data.names.length - data.kept.length;
    var file = el("code", "", data.file);
    file.dir = "ltr";
    if (written) {
      summary.append("Wrote " + plural(written, "value") + " to ", file, ".");
    } else {
      summary.append(file, " already held " + data.kept.join(", ") + "; nothing was changed.");
    }
    section.appendChild(summary);

    var list = el("ul", "results");
    data.names.forEach(function (name) {
      var item = el("li");
      item.appendChild(el("span", "mono", name));
      [["generated", data.generated], ["added", data.added],
       ["replaced", data.replaced], ["kept", data.kept]].forEach(function (pair) {
        if (pair[1].indexOf(name) >= 0) item.append(" ", el("span", "tag", pair[0]));
      });
      list.appendChild(item);
    });
    section.appendChild(list);

    if (data.emoji && data.emoji.length) {
      var box = el("div", "fp");
      box.id = "fp";
      box.appendChild(el("h2", "", "Fingerprint"));
      var shown = el("p", "fp-emoji", data.emoji.map(function (p) { return p[0]; }).join(" "));
      shown.id = "fp-server";
      shown.setAttribute("role", "img");
      shown.setAttribute("aria-label", data.emoji.map(function (p) { return p[1]; }).join(", "));
      box.appendChild(shown);
      box.appendChild(el("p", "fp-names", data.emoji.map(function (p) { return p[1]; }).join(" · ")));
      section.appendChild(box);

      var check = el("p", "fp-check");
      check.id = "fp-check";
      check.setAttribute("role", "status");
      var server = data.emoji.map(function (p) { return p[0]; }).join(" ");
      var local = mine ? mine.emoji.join(" ") : "";
      check.setAttribute("data-page-fingerprint", local);
      if (mine && local === server) {
        check.classList.add("match");
        check.textContent = "✓ This page computed the same four emoji from what you typed.";
      } else {
        check.classList.add("mismatch");
        check.textContent = "✗ This page computed " + (local || "no fingerprint") +
          " from what you typed, which does not match: the file may not hold what you typed.";
      }
      section.appendChild(check);
      section.appendChild(el("p", "", "Your agent reports these same four emoji. If it " +
        "reports others, the write it describes is not the one you made: tell it so."));
    } else {
      section.appendChild(el("p", "", "No fingerprint: offprompt generated or kept every " +
        "value, so nothing typed here needs checking."));
    }
    section.appendChild(el("p", "muted", "You can close this tab."));
    return section;
  }

  function closedView(text) {
    var section = el("section");
    section.appendChild(el("h1", "", "Closed"));
    section.appendChild(el("p", "message", text));
    return section;
  }

  async function readJson(response) {
    try {
      return await response.json();
    } catch (e) {
      return {};
    }
  }

  function plainBody(pairs, allowTracked, fpKey) {
    var body = new URLSearchParams();
    body.append("nonce", form.elements.nonce.value);
    pairs.forEach(function (pair) { body.append(pair[0], pair[1]); });
    if (allowTracked) body.append("allow_tracked", "1");
    body.append("fp_key", fpKey);
    return body;
  }

  // -- Remote pages (DESIGN §5) -------------------------------------------------------------
  // The values are sealed here, to the public key in the link's "#k=", and only `nonce` and
  // `sealed` are posted. The key is read from the fragment (which no browser sends to a
  // server) and then taken out of the address bar. Without a valid key or WebCrypto the
  // button stays off and nothing can be sent.
  var sealing = form.getAttribute("data-remote") === "1" ? remoteSealing() : null;

  function remoteSealing() {
    var status = document.getElementById("seal-status");
    var state = { ready: false, point: null };
    var noKey = "This link has no valid key, so nothing can be sent from this page. Open the " +
      "exact link the agent gave you, in full (it ends in #k=…).";
    function say(text, ok) {
      status.textContent = text;
      status.className = "seal-status " + (ok ? "hint" : "warn");
    }
    submitButton.disabled = true;
    var hash = location.hash;
    if (hash) history.replaceState(null, "", location.pathname + location.search);
    if (!globalThis.offpromptSealSupported || !globalThis.offpromptSealSupported()) {
      say("This browser cannot encrypt on this page (WebCrypto is missing), so nothing can be " +
        "sent from it. Open the link in an up-to-date browser, over https.", false);
      return state;
    }
    state.point = globalThis.offpromptLinkKey(hash);
    if (!state.point) {
      say(noKey, false);
      return state;
    }
    globalThis.offpromptCheckKey(state.point).then(function (ok) {
      if (!ok) return say(noKey, false);
      state.ready = true;
      if (!busy && !done) submitButton.disabled = false;
      say("What you type is encrypted in this browser, to a key only offprompt on the agent's " +
        "machine holds, before it is sent.", true);
    });
    return state;
  }

  async function sealedBody(pairs, allowTracked, fpKey) {
    var named = {};
    pairs.forEach(function (pair) { named[pair[0]] = pair[1]; });
    var token = form.getAttribute("action").split("/").pop();
    var nonce = form.elements.nonce.value;
    var sealed = await globalThis.offpromptSeal(sealing.point, token, nonce,
      { values: named, allow_tracked: allowTracked, fp_key: fpKey });
    var body = new URLSearchParams();
    body.append("nonce", nonce);
    body.append("sealed", sealed);
    return body;
  }
  // -- end of remote pages --------------------------------------------------------------------

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    if (busy || done || (sealing && !sealing.ready)) return;
    busy = true;
    submitButton.disabled = true;
    form.setAttribute("aria-busy", "true");
    clearErrors();
    try {
      var pairs = values();
      var tracked = document.getElementById("allow-tracked");
      var allowTracked = Boolean(tracked && tracked.checked);

      // The fingerprint covers what this page supplies: every non-empty field, request order.
      var key = globalThis.offpromptNewFpKey();
      var supplied = pairs.filter(function (pair) { return pair[1] !== ""; });
      var mine = null;
      if (supplied.length) {
        try {
          mine = await globalThis.offpromptFingerprint(key, supplied, table);
        } catch (e) {
          mine = null;
        }
      }
      var fpKey = globalThis.offpromptFpKeyToB64u(key);
      var body;
      try {
        body = sealing ? await sealedBody(pairs, allowTracked, fpKey)
                       : plainBody(pairs, allowTracked, fpKey);
      } catch (e) {
        setFormError("This browser could not encrypt the values, so nothing was sent.");
        return;
      }

      var response = await fetch(form.action, {
        method: "POST",
        headers: { "Accept": "application/json" },
        body: body,
        credentials: "same-origin",
        cache: "no-store",
        redirect: "error",
        referrerPolicy: "no-referrer",
      });
      var data = await readJson(response);
      if (response.status === 200 && data.status === "written") {
        finish(writtenView(data, mine));
      } else if (response.status === 422) {
        var first = showErrors(data.errors || {});
        if (data.tracked) document.getElementById("tracked").hidden = false;
        setFormError(data.error || (first ? "" : "Some values were not accepted."));
        if (first) first.focus();
      } else if (response.status === 410) {
        finish(closedView(data.error || "This request is closed."));
      } else {
        setFormError(data.error || "offprompt answered HTTP " + response.status +
          ". Nothing was written.");
      }
    } catch (e) {
      setFormError("offprompt could not be reached. Is the agent still running? " +
        "Nothing was written.");
    } finally {
      busy = false;
      submitButton.disabled = Boolean(sealing && !sealing.ready);
      form.removeAttribute("aria-busy");
    }
  });

  // Follow the request's state: the agent may cancel it, or its time may run out.
  var statusUrl = form.action + "/status";
  async function poll() {
    if (done) return;
    try {
      var response = await fetch(statusUrl, {
        headers: { "Accept": "application/json" },
        cache: "no-store",
        credentials: "same-origin",
        redirect: "error",
        referrerPolicy: "no-referrer",
      });
      if (done || busy) return schedule();
      if (response.status === 404) {
        return finish(closedView("This request is no longer known to offprompt."));
      }
      var data = await readJson(response);
      if (data.status && data.status !== "awaiting") {
        var why = { written: "These values were already written.",
                    cancelled: "The agent cancelled this request. Nothing was written from this page.",
                    expired: "This request expired before anything was written. Ask the agent again." };
        return finish(closedView(why[data.status] || "This request is closed."));
      }
      if (typeof data.expires_in === "number" && expiry) {
        var minutes = Math.round(data.expires_in / 60);
        expiry.textContent = "This link expires in " +
          (data.expires_in <= 60 ? "less than a minute" : plural(minutes, "minute")) + ".";
      }
    } catch (e) {
      // offprompt may be busy or gone; the submit will say so if it matters.
    }
    schedule();
  }
  function schedule() {
    if (!done) setTimeout(poll, 5000);
  }
  schedule();
})();
