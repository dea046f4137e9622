/* offprompt page: filling a key from the OS's keyring (DESIGN §13.2). Served only on a page
 * that offers a "Use the value saved in your keyring" box. A ticked box whose field is empty is
 * filled on the server, so this page never holds that value: fields.js stops asking for it
 * (offpromptKeyring), and page.js posts the names offpromptFilled gives (`keyring.NAME=1`, or
 * `"keyring": [NAME]` inside the seal) and shows offprompt's own four emoji, since it can
 * compute none of its own.
 */
(function () {
  "use strict";

  var page = globalThis.offpromptPage;
  if (!page) return;
  globalThis.offpromptKeyring = function (area) {
    var tick = page.form.elements["keyring." + area.name];
    return Boolean(tick && tick.checked && page.blank(area.value));
  };
  globalThis.offpromptFilled = function () {
    return page.fields().filter(offpromptKeyring).map(function (area) { return area.name; });
  };
  // Only a keyring box's own change: a field's (on its blur, as the button is pressed) would
  // redraw the button's words under the pointer, and the press would then submit nothing.
  page.form.addEventListener("change", function (event) {
    if (event.target.classList.contains("keyring-box")) page.update();
  });
  page.update();
})();
