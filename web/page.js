/* offprompt page script: the submit (plain or sealed), the Written view with the page's own
 * four emoji beside the server's, and the request's state every 10 s.
 *
 * The page works without it (plain form post), except a remote page, which must seal. It talks
 * to nothing but its own origin, and never puts a value anywhere but the textarea it came
 * from and the request body. Fields, paste and files are fields.js and fill.js.
 */
(function () {
  "use strict";

  var page = globalThis.offpromptPage;
  if (!page) return;
  var form = page.form;
  // The card is looked up once: a held submit's view takes the form out of it (showHeld), and
  // the Written view that follows must still find it.
  var card = form.closest("main");
  var el = page.el;
  // 2 s while a submit waits for its code
  var POLL_MS = 10000;
  var table = JSON.parse(document.getElementById("emoji-table").textContent);
  var submitButton = document.getElementById("submit");
  var formError = document.getElementById("form-error");
  var expiry = document.getElementById("expiry");
  var busy = false;
  var done = false;
  var sent = false;
  // DESIGN §16: the "Check with the provider first" box, and "Write anyway" after a 409.
  var checkBox = document.getElementById("check");
  var anywayButton = document.getElementById("anyway");
  var anyway = false;

  // DESIGN §17: only the GET that claimed the request hands out its nonce (a server on another
  // port of this machine the browser is sent to gets the cookie, which alone must be no way
  // in). It is kept in this origin's own storage, which no other port can read, so a reload
  // (served with an empty nonce) can still send. No storage: the page says to use the first tab.
  var nonceIn = form.elements.nonce;
  var nonceKey = form.getAttribute("action");
  var remote = form.hasAttribute("data-remote");
  function keepNonce(v) {
    try {
      if (v) localStorage.setItem(nonceKey, v);
      else localStorage.removeItem(nonceKey);
    } catch (e) {}
  }
  if (form.hasAttribute("data-reopened")) {
    try {
      nonceIn.value = localStorage.getItem(nonceKey) || "";
    } catch (e) {}
    if (nonceIn.value) {
      document.getElementById("reopened").remove();
      if (!remote) submitButton.disabled = false;
    }
  } else if (!remote) keepNonce(nonceIn.value);

  function setFormError(text) {
    formError.textContent = text || "";
    formError.hidden = !text;
  }

  function clearErrors() {
    setFormError("");
    page.fields().forEach(function (area) {
      var list = document.getElementById("e-" + area.name);
      list.replaceChildren();
      list.hidden = true;
      area.removeAttribute("aria-invalid");
      area.closest(".field").classList.remove("invalid");
    });
    var notice = form.querySelector(".notice");
    if (notice) notice.remove();
    form.querySelectorAll("p.verdict").forEach(function (p) { p.remove(); });
    if (anywayButton) anywayButton.hidden = true;
  }

  function showErrors(errors) {
    var first = null;
    page.fields().forEach(function (area) {
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

  // Each provider's verdict under its field: "Works — account acme", "… refused this key".
  function showVerdicts(checked, texts) {
    Object.keys(checked).forEach(function (name) {
      var area = form.elements[name];
      if (!area || checked[name] === "skipped" || !texts[name]) return;
      var p = el("p", "verdict " + checked[name], texts[name]);
      p.id = "k-" + name;
      p.setAttribute("role", "status");
      p.setAttribute("data-check", checked[name]);
      area.closest(".field").appendChild(p);
    });
  }

  // What this page can tell before sending: empty required fields, enforced rules failing.
  function precheck() {
    var p = page.problems();
    var errors = {};
    p.missing.forEach(function (area) { errors[area.name] = ["Required"]; });
    p.failing.forEach(function (area) {
      var result = globalThis.offpromptCheck(page.data.fields[area.name],
        page.sent(area), page.data.hints);
      errors[area.name] = ["Not written yet: fix the line marked ✗ above."];
      page.showRules(area, false);
    });
    var first = showErrors(errors);
    if (!first) return true;
    var names = p.missing.map(function (a) { return a.name; }).join(", ");
    setFormError(names ? "Fill in " + names + " first." :
      "Fix the value marked above first: it is checked before writing.");
    first.focus();
    return false;
  }

  function values() {
    return page.fields().map(function (area) { return [area.name, page.sent(area)]; });
  }

  function finish(main) {
    done = true;
    keepNonce("");
    page.fields().forEach(function (area) { area.value = ""; });
    card.replaceChildren(card.querySelector(".brand"), main);
    var heading = main.querySelector("h1");
    if (heading) {
      heading.tabIndex = -1;
      heading.focus();
    }
  }

  // The server's own section (names and emoji, never a value), with this page's check added.
  function writtenView(data, mine, madeHere) {
    var holder = document.createElement("template");
    holder.innerHTML = data.html;
    var section = holder.content.querySelector("#written");
    madeHere.forEach(function (name) {
      var row = section.querySelector('li[data-name="' + name + '"]');
      if (!row) return;
      row.querySelector(".tags").prepend(el("span", "tag generated", "generated"), " ");
      var why = row.querySelector(".why");
      why.textContent = "generated in this browser; " + why.textContent;
    });
    var box = section.querySelector("#fp");
    if (!box || mine === 0) return section;
    var check = el("p", "fp-check");
    check.id = "fp-check";
    check.setAttribute("role", "status");
    var server = data.emoji.map(function (p) { return p[0]; }).join(" ");
    var local = mine ? mine.emoji.join(" ") : "";
    check.setAttribute("data-page-fingerprint", local);
    if (mine && local === server) {
      check.classList.add("match");
      check.textContent = "✓ This page computed the same four emoji from what you typed: " +
        "the file holds exactly that.";
    } else {
      check.classList.add("mismatch");
      check.textContent = "✗ This page computed " + (local || "no fingerprint") +
        " from what you typed, which does not match: the file may not hold what you typed.";
    }
    box.after(check);
    return section;
  }

  // DESIGN §17: a remote submit is held until the code shown here comes back through the
  // agent's host. The page keeps asking for the request's state, and says when it is written.
  // This page's own four emoji for the held submit; null: nothing is held.
  var held = null;

  function showHeld(data, mine) {
    held = mine ? mine.emoji.join(" ") : "";
    page.fields().forEach(function (area) { area.value = ""; });
    var holder = document.createElement("template");
    holder.innerHTML = data.html;
    var section = holder.content.querySelector("#confirm");
    if (held) {
      section.appendChild(el("p", "hint", "Agent will say " + held));
    }
    // The request's state stays in view.
    section.appendChild(expiry);
    card.replaceChildren(card.querySelector(".brand"), section);
    POLL_MS = 2000;
    poll();
  }

  function closedView(title, text) {
    var section = el("section", "closed");
    section.id = "closed";
    section.appendChild(el("h1", "", title));
    section.appendChild(el("p", "message", text));
    return section;
  }

  // Every request this page makes: to its own address (+ `tail`), a POST when it has a body,
  // never following a redirect or sending a referrer.
  function send(tail, body) {
    return fetch(form.action + tail, {
      method: body ? "POST" : "GET",
      headers: { "Accept": "application/json" },
      body: body,
      credentials: "same-origin",
      cache: "no-store",
      redirect: "error",
      referrerPolicy: "no-referrer",
    });
  }

  async function readJson(response) {
    try {
      return await response.json();
    } catch (e) {
      return {};
    }
  }

  // The "Also sent to" boxes (DESIGN §13): the indices of the ticked ones. They sit outside
  // the form element (form="collect"), so they are looked up by name.
  function tickedAlso() {
    var ticked = [];
    document.querySelectorAll('input[type="checkbox"][name^="also."]').forEach(function (box) {
      var index = Number(box.name.slice(5));
      if (box.checked && Number.isInteger(index)) ticked.push(index);
    });
    return ticked;
  }

  // The names whose empty field the server fills from the keyring (web/keyring.js, §13.2).
  function filled() { return globalThis.offpromptFilled ? offpromptFilled() : []; }

  function plainBody(pairs, allowTracked, fpKey, also) {
    var body = new URLSearchParams();
    body.append("nonce", nonceIn.value);
    pairs.forEach(function (pair) { body.append(pair[0], pair[1]); });
    filled().forEach(function (n) { body.append("keyring." + n, "1"); });
    if (allowTracked) body.append("allow_tracked", "1");
    if (checkBox && checkBox.checked) body.append("check", "1");
    if (anyway) body.append("anyway", "1");
    body.append("fp_key", fpKey);
    also.forEach(function (i) { body.append("also." + i, "1"); });
    return body;
  }

  // -- Remote pages (DESIGN §5) -------------------------------------------------------------
  // The values are sealed here, to the public key in the link's "#k=", and only `nonce` and
  // `sealed` are posted. The key is read from the fragment (which no browser sends to a
  // server) and then taken out of the address bar. Without a valid key or WebCrypto the
  // button stays off and nothing can be sent.
  var sealing = remote ? remoteSealing() : null;

  function remoteSealing() {
    var status = document.getElementById("seal-status");
    var state = { ready: false, point: null };
    var noKey = "This link has no valid key, so nothing can be sent. Open the " +
      "exact link the agent gave you, in full (it ends in #k=…).";
    function say(text, ok) {
      status.textContent = text;
      status.className = "seal-status " + (ok ? "hint" : "warn");
    }
    submitButton.disabled = true;
    var hash = location.hash;
    if (hash) history.replaceState(null, "", location.pathname + location.search);
    if (!globalThis.offpromptSealSupported || !globalThis.offpromptSealSupported()) {
      say("This browser cannot encrypt here (no WebCrypto), so nothing can be sent from it.",
        false);
      return state;
    }
    state.point = globalThis.offpromptLinkKey(hash);
    if (!state.point) {
      say(noKey, false);
      return state;
    }
    // Opened again in this browser, not in the tab that holds the nonce: #reopened says so.
    if (!nonceIn.value) {
      status.hidden = true;
      return state;
    }
    // The key checks out and this browser holds the request (DESIGN §17): only then can it send.
    Promise.all([globalThis.offpromptCheckKey(state.point), claimRemote()]).then(function (both) {
      if (!both[0]) return say(noKey, false);
      if (!both[1]) return;
      state.ready = true;
      if (!busy && !done) submitButton.disabled = false;
      say("What you type is encrypted in this browser, to a key only offprompt on the agent's " +
        "machine holds, before it is sent.", true);
    }, function () { say("offprompt is out of reach: reload.", false); });
    return state;
  }

  // A remote page claims its request from here, once it has loaded, so a link previewer that
  // fetches the page without running script claims nothing (DESIGN §17). True: this browser
  // holds it; otherwise the page says why and nothing can be sent from it.
  async function claimRemote() {
    var response = await send("/claim", new URLSearchParams({ nonce: nonceIn.value }));
    if (response.status === 204) {
      keepNonce(nonceIn.value);
      return true;
    }
    var data = await readJson(response);
    finish(closedView(response.status === 403 ? "Another browser" : "Closed",
      data.error || "HTTP " + response.status));
    return false;
  }

  async function sealedBody(pairs, allowTracked, fpKey, also) {
    var named = {};
    pairs.forEach(function (pair) { named[pair[0]] = pair[1]; });
    var token = form.getAttribute("action").split("/").pop();
    var nonce = nonceIn.value;
    var sealed = await globalThis.offpromptSeal(sealing.point, token, nonce,
      { values: named, allow_tracked: allowTracked, fp_key: fpKey, also: also,
        check: Boolean(checkBox && checkBox.checked), anyway: anyway, keyring: filled() });
    var body = new URLSearchParams();
    body.append("nonce", nonce);
    body.append("sealed", sealed);
    return body;
  }
  // -- end of remote pages --------------------------------------------------------------------

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    if (busy || done || (sealing && !sealing.ready) || !nonceIn.value) return;
    clearErrors();
    if (!precheck()) return;
    busy = true;
    submitButton.disabled = true;
    form.setAttribute("aria-busy", "true");
    var label = document.getElementById("submit-text");
    var text = label.innerHTML;
    if (checkBox && checkBox.checked) label.textContent = "Checking with the providers…";
    try {
      var pairs = values();
      var madeHere = page.generatedHere();
      var tracked = document.getElementById("allow-tracked");
      var allowTracked = Boolean(tracked && tracked.checked);

      // The fingerprint covers what this page supplies, exactly as sent: every field that is
      // not blank (a blank one counts as empty on the server too), in request order.
      var key = globalThis.offpromptNewFpKey();
      var supplied = pairs.filter(function (pair) { return !page.blank(pair[1]); });
      var mine = null;
      // A value from the keyring never reaches this page: the server's emoji are the only ones.
      var kr = filled().length;
      if (supplied.length && !kr) {
        try {
          mine = await globalThis.offpromptFingerprint(key, supplied, table);
        } catch (e) {
          mine = null;
        }
      }
      var fpKey = globalThis.offpromptFpKeyToB64u(key);
      var body;
      try {
        var also = tickedAlso();
        body = sealing ? await sealedBody(pairs, allowTracked, fpKey, also)
                       : plainBody(pairs, allowTracked, fpKey, also);
      } catch (e) {
        setFormError("This browser could not encrypt the values, so nothing was sent.");
        return;
      }

      sent = true;
      var response = await send("", body);
      var data = await readJson(response);
      if (response.status === 200 && data.status === "written") {
        finish(writtenView(data, kr ? 0 : mine, madeHere));
      } else if (response.status === 200 && data.status === "confirm") {
        showHeld(data, mine);
      } else if (response.status === 422) {
        var first = showErrors(data.errors || {});
        var box = document.getElementById("tracked");
        if (data.tracked) box.hidden = false;
        setFormError(data.error || (first ? "" : "Some values were not accepted."));
        if (data.tracked) document.getElementById("allow-tracked").focus();
        else if (first) first.focus();
      } else if (response.status === 409 && data.nonce) {
        nonceIn.value = data.nonce;
        keepNonce(data.nonce);
        showVerdicts(data.checked || {}, data.verdicts || {});
        setFormError(data.error);
        if (anywayButton) anywayButton.hidden = false;
      } else if (response.status === 410) {
        finish(closedView("Closed", data.error || "This request is closed."));
      } else {
        setFormError((data.error || "offprompt answered HTTP " + response.status +
          ". Nothing was written.") + " What you typed is still here.");
      }
    } catch (e) {
      setFormError("offprompt could not be reached, so nothing was written. Is the agent " +
        "running? What you typed is still here.");
    } finally {
      if (!done) label.innerHTML = text;
      anyway = false;
      busy = false;
      submitButton.disabled = Boolean(sealing && !sealing.ready) || done;
      form.removeAttribute("aria-busy");
    }
  });

  if (anywayButton) {
    anywayButton.addEventListener("click", function () {
      anyway = true;
      form.requestSubmit();
    });
  }

  // -- the request's state: time left, the agent cancelling, another tab writing ------------
  var CLOSED = {
    expired: ["Expired", "This request expired before anything was written. Nothing you " +
      "typed here was sent. Ask the agent to ask again."],
    cancelled: ["Cancelled", "The agent cancelled this request. Nothing you typed here was sent."],
    written: ["Already written", "These keys were written from another tab or window. " +
      "Nothing from this page was sent."],
  };
  var deadline = null;
  var timer = null;

  function left() {
    var s = Math.max(0, Math.round((deadline - Date.now()) / 1000));
    if (s > 90) return "expires in " + page.plural(Math.round(s / 60), "minute");
    return "expires in " + page.plural(s, "second");
  }
  function tick() {
    if (done || deadline === null || expiry.classList.contains("warn")) return;
    expiry.textContent = "Connected to offprompt · this page " + left() + ".";
    if (Date.now() >= deadline) poll();
  }

  async function poll() {
    clearTimeout(timer);
    if (done) return;
    try {
      var response = await send("/status");
      if (done || busy) return schedule();
      if (response.status === 404) {
        return finish(closedView("Closed", "This request is no longer known to offprompt."));
      }
      var data = await readJson(response);
      // Not offprompt's answer (a tunnel's error page once offprompt stopped): not connected.
      if (!response.ok || !data.status) throw 0;
      if (data.status !== "awaiting" && data.status !== "confirm") {
        var why = CLOSED[data.status] || ["Closed", "This request is closed."];
        if (held !== null) {
          why = data.status === "written" ? ["Written", "Fingerprint " + held] : why;
        } else if (data.status === "written" && sent) {
          why = ["Written", "offprompt wrote the values, but this page missed its answer. " +
            "Your agent has the fingerprint."];
        }
        return finish(closedView(why[0], why[1]));
      }
      expiry.classList.remove("warn");
      if (typeof data.expires_in === "number") deadline = Date.now() + data.expires_in * 1000;
      tick();
    } catch (e) {
      expiry.classList.add("warn");
      expiry.textContent = "offprompt stopped or cannot be reached: nothing is sent from " +
        "here until it answers again." + (held === null ? " What you typed stays here." : "");
    }
    schedule();
  }
  function schedule() {
    clearTimeout(timer);
    if (!done) timer = setTimeout(poll, POLL_MS);
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") poll();
  });
  setInterval(tick, 1000);
  poll();
})();
