"""The tool listing `offprompt serve` reads (`offprompt/tools/listing.json`) is what the schemas,
the registry and the descriptions give today, and the command that regenerates it works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from offprompt import tools
from offprompt.tools import listing


def test_listing_file_equals_what_the_schemas_and_registry_give() -> None:
    """A schema, registry or description change without regenerating the file fails here."""
    assert tools.load_listing() == listing.generate(), (
        f"offprompt/tools/listing.json is out of date: run `{listing.REGENERATE}`"
    )


def test_listing_file_is_written_as_the_generator_renders_it() -> None:
    """The file is the generator's own output, byte for byte (no hand edits)."""
    text = Path(tools.LISTING).read_text(encoding="utf-8")
    assert text == listing.render(listing.generate()), (
        f"offprompt/tools/listing.json was edited by hand: run `{listing.REGENERATE}`"
    )


def test_served_tools_describe_the_listing() -> None:
    """`tools/list` answers with the listing's entries, in its order, handlers attached."""
    served = tools.build(lambda: pytest.fail("no tool was called"))
    assert [t.describe() for t in served] == tools.load_listing()


def test_check_reports_a_stale_file_and_regenerating_mends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--check` exits 1 naming the command when the file differs; the command rewrites it."""
    stale = tmp_path / "listing.json"
    current = listing.generate()
    current[0]["description"] = "an old description"
    stale.write_text(json.dumps(current), encoding="utf-8")
    monkeypatch.setattr(listing, "LISTING", str(stale))
    assert listing.main(["--check"]) == 1
    assert listing.REGENERATE in capsys.readouterr().err
    assert listing.main([]) == 0
    assert listing.main(["--check"]) == 0
    assert json.loads(stale.read_text(encoding="utf-8")) == listing.generate()


def test_a_listing_without_a_served_tool_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing that names other tools than the handlers serve stops the server at start."""
    short = tmp_path / "listing.json"
    short.write_text(json.dumps(listing.generate()[:3]), encoding="utf-8")
    monkeypatch.setattr(tools, "LISTING", str(short))
    with pytest.raises(RuntimeError, match="not the tools this module serves"):
        tools.build(lambda: pytest.fail("no tool was called"))
