"""What the page tests do to a page as a person would: paste, drop a file, record every request."""

from __future__ import annotations

from dataclasses import dataclass, field

from playwright.sync_api import ConsoleMessage, Page
from playwright.sync_api import Request as BrowserRequest

from offprompt.crypto.fingerprint import EMOJI

NAMES = dict(EMOJI)


@dataclass(frozen=True)
class Sent:
    """One request the page made."""

    method: str
    url: str
    body: str


@dataclass
class Recorder:
    """Every request one page made, and what its console said."""

    sent: list[Sent] = field(default_factory=list)
    console: list[str] = field(default_factory=list)

    def urls(self) -> list[str]:
        return [s.url for s in self.sent]

    def posts(self) -> list[Sent]:
        return [s for s in self.sent if s.method != "GET"]

    def status_polls(self) -> int:
        return sum(1 for s in self.sent if s.url.endswith("/status"))


def record(page: Page) -> Recorder:
    rec = Recorder()

    def on_request(request: BrowserRequest) -> None:
        rec.sent.append(Sent(request.method, request.url, request.post_data or ""))

    def on_console(message: ConsoleMessage) -> None:
        rec.console.append(f"{message.type}: {message.text}")

    page.on("request", on_request)
    page.on("console", on_console)
    return rec


def paste(page: Page, selector: str | None, text: str) -> None:
    """Put `text` on the clipboard and press Ctrl+V in `selector` (None: on the page itself)."""
    page.evaluate("text => navigator.clipboard.writeText(text)", text)
    if selector is None:
        page.evaluate("document.activeElement && document.activeElement.blur()")
    else:
        page.focus(selector)
    page.keyboard.press("Control+V")


def drop_file(page: Page, name: str, text: str) -> None:
    """Drag a file holding `text` onto the page and drop it, as from a file manager."""
    page.evaluate(
        """([name, text]) => {
            const data = new DataTransfer();
            data.items.add(new File([text], name, { type: "text/plain" }));
            for (const type of ["dragenter", "dragover", "drop"]) {
                const event = new DragEvent(type, {
                    dataTransfer: data, bubbles: true, cancelable: true });
                document.body.dispatchEvent(event);
            }
        }""",
        [name, text],
    )


def dom(page: Page) -> str:
    """The whole document as it is now, with every field's current value appended."""
    html: str = page.evaluate("document.documentElement.outerHTML")
    values: list[str] = page.evaluate(
        "Array.from(document.querySelectorAll('textarea, input')).map(e => e.value)"
    )
    return html + "\n".join(values)


def rule_states(page: Page, name: str) -> list[str]:
    """The state of each rule line under a field: '', 'pending', 'pass' or 'fail'."""
    states: list[str] = page.locator(f"#r-{name} li.rule").evaluate_all(
        "els => els.map(e => e.className.replace('rule', '').trim())"
    )
    return states


def focused(page: Page) -> str:
    """The focused element as `tag#id`, `tag[name]` or `tag.class`."""
    described: str = page.evaluate(
        """() => {
            const e = document.activeElement;
            if (!e || e === document.body) return "body";
            const tag = e.tagName.toLowerCase();
            if (e.id && !e.name) return tag + "#" + e.id;
            if (e.name) return tag + "[" + e.name + "]";
            const field = e.closest(".field");
            return tag + "." + e.className + (field ? "@" + field.id.slice(6) : "");
        }"""
    )
    return described
