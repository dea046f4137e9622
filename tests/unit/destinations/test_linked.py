"""Which platforms a project is linked to, read from its own files only (DESIGN §13)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from fake_programs import git
from hung_fs import hung_mount

from offprompt.errors import NotLinked, RefusedRequest
from offprompt.sinks import destinations
from offprompt.sinks.destinations import github, linked
from offprompt.sinks.destinations.cloudflare import CloudflareSpec
from offprompt.sinks.destinations.fly import FlySpec
from offprompt.sinks.destinations.github import GithubSpec
from offprompt.sinks.destinations.vercel import VercelSpec

GITHUB = GithubSpec()
VERCEL = VercelSpec(environments=("production", "preview"))
CLOUDFLARE = CloudflareSpec()
FLY = FlySpec()


@pytest.mark.parametrize(
    ("url", "repo"),
    [
        ("git@github.com:acme/web.git", "acme/web"),
        ("git@github.com:acme/web", "acme/web"),
        ("github.com:acme/web.git", "acme/web"),
        ("https://github.com/acme/web.git", "acme/web"),
        ("https://github.com/acme/web", "acme/web"),
        ("https://github.com/acme/web/", "acme/web"),
        ("https://x-access-token:ghp_abc@github.com/acme/web.git", "acme/web"),
        ("ssh://git@github.com/acme/web.git", "acme/web"),
        ("ssh://git@github.com:22/acme/web.git", "acme/web"),
        ("git://github.com/acme/web.git", "acme/web"),
        ("https://GitHub.com/Acme/my.repo-1.git", "Acme/my.repo-1"),
    ],
)
def test_github_remote_forms_name_owner_and_repo(url: str, repo: str) -> None:
    """https, ssh and scp-like remotes of github.com give OWNER/REPO."""
    assert github.github_repo(url) == repo


@pytest.mark.parametrize(
    "url",
    [
        "git@gitlab.com:acme/web.git",
        "https://github.example.com/acme/web.git",
        "https://evilgithub.com/acme/web.git",
        "https://github.com.evil.com/acme/web.git",
        "https://github.com/acme",
        "https://github.com/acme/web/extra",
        "https://github.com/-acme/web",
        "https://github.com/acme/..",
        "/srv/git/web.git",
        "",
    ],
)
def test_other_remotes_are_not_github(url: str) -> None:
    """Another host, a lookalike, a path or a malformed address is no GitHub link."""
    assert github.github_repo(url) is None


def test_github_link_is_the_first_remote_in_config_order(project: Path) -> None:
    """With several remotes, the first one added decides (not the alphabetical first)."""
    git(project, "init", "-q")
    git(project, "remote", "add", "zorigin", "https://github.com/acme/first.git")
    git(project, "remote", "add", "alpha", "https://github.com/other/second.git")
    link = destinations.KINDS["github"].link(project, GITHUB, {})
    assert (link.ident, link.target) == ("acme/first", "acme/first")


def test_github_first_remote_elsewhere_is_not_linked_and_url_is_not_shown(project: Path) -> None:
    """A first remote that is not github.com is refused, naming the remote, never its url."""
    git(project, "init", "-q")
    git(project, "remote", "add", "origin", "https://tok3n@gitlab.com/acme/web.git")
    git(project, "remote", "add", "mirror", "https://github.com/acme/web.git")
    with pytest.raises(NotLinked, match="'origin'") as err:
        destinations.KINDS["github"].link(project, GITHUB, {})
    assert "tok3n" not in str(err.value)
    assert "gitlab" not in str(err.value)


def test_github_without_remote_or_repository_is_not_linked(project: Path) -> None:
    """No repository, or one without a remote, links nowhere."""
    with pytest.raises(NotLinked, match="not a git repository"):
        destinations.KINDS["github"].link(project, GITHUB, {})
    git(project, "init", "-q")
    with pytest.raises(NotLinked, match="has no remote"):
        destinations.KINDS["github"].link(project, GITHUB, {})


def test_github_never_reads_the_global_git_config(project: Path) -> None:
    """A remote in ~/.gitconfig is not the project's: outside a repository, nothing links."""
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text('[remote "origin"]\n\turl = https://github.com/evil/x\n')
    with pytest.raises(NotLinked, match="not a git repository"):
        destinations.KINDS["github"].link(project, GITHUB, {})


def test_github_ignores_git_dir_from_the_environment(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIT_DIR pointing at another repository cannot lend the project its remote."""
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "remote", "add", "origin", "https://github.com/evil/elsewhere.git")
    git(project, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    with pytest.raises(NotLinked, match="has no remote"):
        destinations.KINDS["github"].link(project, GITHUB, {})


def test_github_environment_shows_in_target(linked: Path) -> None:
    """An environment is part of the target the page shows."""
    spec = GithubSpec(environment="production")
    link = destinations.KINDS["github"].link(linked, spec, {})
    assert link.target == "acme/web (environment production)"


def test_vercel_link_reads_project_json(linked: Path) -> None:
    """.vercel/project.json gives the project; the target names it by id (its name beside)
    and the environments."""
    link = destinations.KINDS["vercel"].link(linked, VERCEL, {})
    assert (link.ident, link.target) == ("prj_123", "prj_123 (web) in production, preview")


@pytest.mark.parametrize(
    ("content", "why"),
    [(None, "no .vercel/project.json"), ("{", "not valid JSON"), ("{}", "no projectId")],
)
def test_vercel_without_usable_project_json_is_not_linked(
    project: Path, content: str | None, why: str
) -> None:
    """No project.json, a broken one, or one without projectId is no Vercel link."""
    if content is not None:
        (project / ".vercel").mkdir()
        (project / ".vercel" / "project.json").write_text(content)
    with pytest.raises(NotLinked, match=why):
        destinations.KINDS["vercel"].link(project, VERCEL, {})


@pytest.mark.parametrize(
    ("file", "text"),
    [
        ("wrangler.toml", 'name = "edge"\n'),
        ("wrangler.json", '{"name": "edge", "main": "src/index.ts"}'),
        ("wrangler.jsonc", '{\n  // the worker\n  "name": "edge", /* here */\n  "main": "x",\n}'),
    ],
)
def test_cloudflare_link_reads_the_worker_name(project: Path, file: str, text: str) -> None:
    """Each of wrangler's config formats names the worker."""
    (project / file).write_text(text)
    link = destinations.KINDS["cloudflare"].link(project, CLOUDFLARE, {})
    assert (link.ident, link.target) == ("edge", "edge")


def test_cloudflare_env_names_its_worker_and_must_exist(project: Path) -> None:
    """`--env staging` targets `NAME-staging` (or the env's own name); an env the config does
    not define is no link."""
    (project / "wrangler.toml").write_text('name = "edge"\n[env.staging]\n[env.prod]\nname = "p"\n')
    kind = destinations.KINDS["cloudflare"]
    assert kind.link(project, CloudflareSpec(env="staging"), {}).ident == ("edge-staging")
    assert kind.link(project, CloudflareSpec(env="prod"), {}).ident == "p"
    with pytest.raises(NotLinked, match=r"defines no env\.qa"):
        kind.link(project, CloudflareSpec(env="qa"), {})


@pytest.mark.parametrize(
    ("file", "text", "why"),
    [
        (None, None, "no wrangler.toml"),
        ("wrangler.toml", 'main = "x"\n', "names no worker"),
        ("wrangler.toml", "name = \n", "not valid TOML"),
        ("wrangler.json", '{"name": "../x"}', "not a worker name"),
    ],
)
def test_cloudflare_without_a_named_worker_is_not_linked(
    project: Path, file: str | None, text: str | None, why: str
) -> None:
    """No config, no name, a broken file or a bad name is no worker link."""
    if file is not None and text is not None:
        (project / file).write_text(text)
    with pytest.raises(NotLinked, match=why):
        destinations.KINDS["cloudflare"].link(project, CLOUDFLARE, {})


def test_fly_link_reads_the_app(linked: Path) -> None:
    """fly.toml's app is the target."""
    link = destinations.KINDS["fly"].link(linked, FLY, {})
    assert (link.ident, link.target) == ("acme-web", "acme-web")


@pytest.mark.parametrize(
    ("text", "why"),
    [(None, "no fly.toml"), ('primary_region = "ams"\n', "names no app"), ("app = 3\n", "no app")],
)
def test_fly_without_an_app_is_not_linked(project: Path, text: str | None, why: str) -> None:
    """No fly.toml, or one without a string app, is no Fly link."""
    if text is not None:
        (project / "fly.toml").write_text(text)
    with pytest.raises(NotLinked, match=why):
        destinations.KINDS["fly"].link(project, FLY, {})


def test_plan_refuses_the_first_unlinked_entry_by_index(linked: Path) -> None:
    """The refusal says which entry and which link is missing."""
    (linked / "fly.toml").unlink()
    with pytest.raises(NotLinked, match=r"also\[1\] \(fly\): .*no fly.toml"):
        destinations.plan(linked, [GITHUB, FLY], ["KEY"])


def test_not_linked_is_a_refusal() -> None:
    """An unlinked destination is refused like any request offprompt will not do."""
    assert issubclass(NotLinked, RefusedRequest)


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ({"kind": "heroku"}, "Unknown destination kind"),
        ({"kind": "github", "repo": "evil/x"}, "takes no repo"),
        ({"kind": "vercel", "project": "prj_evil", "environments": ["preview"]}, "takes no"),
        ({"kind": "fly", "app": "evil"}, "takes no app"),
        ({"kind": "cloudflare", "name": "evil"}, "takes no name"),
        ({"kind": "vercel"}, 'needs "environments"'),
        ({"kind": "vercel", "environments": ["staging"]}, "not a Vercel environment"),
        ({"kind": "github", "environment": "--repo=evil/x"}, "not a GitHub environment"),
        ({"kind": "cloudflare", "env": "-x"}, "not a wrangler environment"),
    ],
)
def test_an_entry_can_never_name_a_target(entry: dict[str, object], why: str) -> None:
    """Repository, project, worker and app come only from the project's files: an entry that
    tries to name one, or an option, is refused."""
    with pytest.raises(RefusedRequest, match=why):
        destinations.parse([entry])


def test_parse_limits_and_duplicates() -> None:
    """At most four entries, each once."""
    with pytest.raises(RefusedRequest, match="at most 4"):
        destinations.parse([{"kind": "fly"}] * 5)
    with pytest.raises(RefusedRequest, match="repeats"):
        destinations.parse([{"kind": "fly"}, {"kind": "fly"}])


def test_jsonc_keeps_comment_markers_and_commas_inside_strings(tmp_path: Path) -> None:
    """Comments and trailing commas go; `//`, `/*` and `, }` inside a string stay as written."""
    (tmp_path / "wrangler.jsonc").write_text(
        '{"name": "w", // c\n "vars": {"NOTE": "a, } // b /* z */, ]",}, "b": [1,],}\n'
    )
    assert linked.read_config(tmp_path, "wrangler.jsonc") == {
        "name": "w",
        "vars": {"NOTE": "a, } // b /* z */, ]"},
        "b": [1],
    }


@pytest.mark.parametrize(
    ("rel", "text", "why"),
    [
        ("fly.toml", "app = " + "[" * 100_000, "fly.toml is not valid TOML"),
        ("wrangler.json", "[" * 100_000, "wrangler.json is not valid JSON"),
        ("wrangler.jsonc", '{"name": "w",, }', "wrangler.jsonc is not valid JSONC"),
    ],
    ids=["toml-deep", "json-deep", "double-comma"],
)
def test_a_config_that_is_no_config_is_unusable_not_a_crash(
    tmp_path: Path, rel: str, text: str, why: str
) -> None:
    """Arrays nested 100,000 deep (under the 1 MiB limit) or a stray comma: ValueError naming
    the file, which linking turns into a refusal, never a RecursionError out of the call."""
    (tmp_path / rel).write_text(text)
    with pytest.raises(ValueError, match=f"^{why}$"):
        linked.read_config(tmp_path, rel)


def _readers() -> int:
    return sum(t.name.startswith("offprompt-read-") for t in threading.enumerate())


def test_reads_stuck_on_a_hung_file_system_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fly.toml on a file system that never answers: each read gives up after READ_SECONDS,
    leaving its thread behind, but never more than MAX_READERS of them; a read past those is
    refused in the same time, starting none, and once the file system answers, reads work."""
    monkeypatch.setattr(linked, "READ_SECONDS", 0.3)
    fly = tmp_path / "fly.toml"
    fly.write_text('app = "web"\n')
    before = _readers()
    with hung_mount(fly):
        errors: list[str] = []

        def read() -> None:
            try:
                linked.read_file(tmp_path, "fly.toml")
            except ValueError as e:
                errors.append(str(e))

        callers = [threading.Thread(target=read) for _ in range(linked.MAX_READERS)]
        for t in callers:
            t.start()
        for t in callers:
            t.join(10)
        assert ["fly.toml was not read in time (0.3 s)"] * linked.MAX_READERS == errors
        assert linked.MAX_READERS == _readers() - before
        start = time.monotonic()
        with pytest.raises(ValueError, match="earlier reads of the project's files are still"):
            linked.read_file(tmp_path, "fly.toml")
        assert 0.3 <= time.monotonic() - start < 5
        assert linked.MAX_READERS == _readers() - before
    deadline = time.monotonic() + 10
    while _readers() > before and time.monotonic() < deadline:
        time.sleep(0.01)  # the stuck reads end once the mount is gone
    assert b'app = "web"\n' == linked.read_file(tmp_path, "fly.toml")


def test_linking_only_reads(linked: Path) -> None:
    """Linking changes nothing in the project (no program runs, no file is written)."""
    before = {p: p.read_bytes() for p in linked.rglob("*") if p.is_file() and ".git" not in p.parts}
    destinations.plan(linked, [GITHUB, VERCEL, CLOUDFLARE, FLY], ["KEY"], env={"PATH": ""})
    after = {p: p.read_bytes() for p in linked.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert before == after
