/* offprompt fill: a pasted block of NAME=value lines, or a chosen or dropped .env file, fills
 * every field it names, with a banner saying what was filled and skipped, and an Undo.
 *
 * The file is read in this page (Blob.text) and never uploaded; a paste that names none of
 * the keys is left to the browser as an ordinary paste. The banner names keys, never values.
 */
(function () {
  "use strict";

  var page = globalThis.offpromptPage;
  if (!page) return;
  var MAX_FILE = 1024 * 1024;
  var banner = document.getElementById("banner");
  var bannerText = document.getElementById("banner-text");
  var undo = document.getElementById("undo");
  var fileInput = document.getElementById("env-file");
  var before = null;

  function names(list) {
    var shown = list.slice(0, 6).map(function (n) { return n.length > 40 ? n.slice(0, 39) + "…" : n; });
    var more = list.length - shown.length;
    if (more > 0) shown.push(page.plural(more, "other"));
    if (shown.length < 2) return shown.join("");
    return shown.slice(0, -1).join(", ") + " and " + shown[shown.length - 1];
  }

  function say(text, canUndo) {
    bannerText.textContent = text;
    undo.hidden = !canUndo;
    banner.hidden = false;
  }

  // What the text assigns to the keys this page asks for (the last assignment wins), and
  // what it holds besides.
  function read(text) {
    var parsed = globalThis.offpromptParseDotenv(text);
    var wanted = {};
    page.fields().forEach(function (area) { wanted[area.name] = area; });
    var found = {};
    var others = [];
    var empty = [];
    parsed.entries.forEach(function (entry) {
      var key = entry[0];
      var value = entry[1];
      if (!Object.prototype.hasOwnProperty.call(wanted, key)) {
        if (others.indexOf(key) < 0) others.push(key);
      } else if (value === null || value === "") {
        if (empty.indexOf(key) < 0) empty.push(key);
      } else {
        found[key] = value;
      }
    });
    var filled = page.fields().filter(function (a) {
      return Object.prototype.hasOwnProperty.call(found, a.name);
    });
    empty = empty.filter(function (k) { return !Object.prototype.hasOwnProperty.call(found, k); });
    return { filled: filled, found: found, others: others, empty: empty, bad: parsed.bad.length };
  }

  function apply(got, source) {
    before = got.filled.map(function (area) { return [area, area.value]; });
    got.filled.forEach(function (area) { page.set(area, got.found[area.name]); });
    var text = "Filled " + names(got.filled.map(function (a) { return a.name; })) + " from " +
      source + ".";
    if (got.others.length) {
      text += " Skipped " + page.plural(got.others.length, "key") + " this page did not ask for: " +
        names(got.others) + ".";
    }
    if (got.empty.length) text += " Skipped " + names(got.empty) + ": empty there.";
    if (got.bad) text += " " + page.plural(got.bad, "line") + " could not be read.";
    var left = page.problems().missing.map(function (a) { return a.name; });
    if (left.length) text += " Still to fill: " + names(left) + ".";
    say(text, true);
  }

  undo.addEventListener("click", function () {
    if (!before) return;
    before.forEach(function (pair) { page.set(pair[0], pair[1]); });
    var first = before.length ? before[0][0] : null;
    before = null;
    say("Undone: the fields hold what they held before.", false);
    if (first) first.focus();
  });

  // A paste anywhere on the page that names a key fills it; anything else pastes as usual.
  document.addEventListener("paste", function (event) {
    var target = event.target;
    if (target instanceof HTMLInputElement) return;
    if (!event.clipboardData) return;
    var got = read(event.clipboardData.getData("text/plain") || "");
    if (!got.filled.length) return;
    event.preventDefault();
    apply(got, "the pasted text");
  });

  function load(file) {
    if (!file) return;
    if (file.size > MAX_FILE) {
      say(file.name + " is larger than 1 MiB, so it was not read. Nothing was filled.", false);
      return;
    }
    file.text().then(function (text) {
      var got = read(text);
      if (got.filled.length) {
        apply(got, file.name);
      } else {
        say(file.name + " names none of the keys asked for here (" +
          names(page.fields().map(function (a) { return a.name; })) + "). Nothing was filled.",
          false);
      }
    }, function () {
      say(file.name + " could not be read. Nothing was filled.", false);
    });
  }

  document.getElementById("choose").addEventListener("click", function () { fileInput.click(); });
  fileInput.addEventListener("change", function () {
    load(fileInput.files && fileInput.files[0]);
    fileInput.value = "";
  });

  // Dropping a file anywhere reads it here; without this the browser would open the file
  // instead of the page.
  function hasFiles(event) {
    var types = event.dataTransfer ? event.dataTransfer.types : [];
    return Array.prototype.indexOf.call(types, "Files") >= 0;
  }
  var depth = 0;
  document.addEventListener("dragenter", function (event) {
    if (!hasFiles(event)) return;
    depth++;
    document.body.classList.add("dropping");
  });
  document.addEventListener("dragleave", function (event) {
    if (!hasFiles(event)) return;
    depth = Math.max(0, depth - 1);
    if (!depth) document.body.classList.remove("dropping");
  });
  document.addEventListener("dragover", function (event) {
    if (!hasFiles(event)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
  });
  document.addEventListener("drop", function (event) {
    if (!hasFiles(event)) return;
    event.preventDefault();
    depth = 0;
    document.body.classList.remove("dropping");
    load(event.dataTransfer.files[0]);
  });
})();
