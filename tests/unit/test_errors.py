"""The error tree drawn in errors.py is the one the package has, and nothing else escapes it."""

import importlib
import inspect
import pkgutil
import re

import offprompt
from offprompt import errors
from offprompt.errors import OffpromptError

# Said by the docstring of every exception class kept outside the root, with who catches it.
PRIVATE = re.compile(r"Outside the error root on purpose|Never leaves this module")

# Classes on the `core` branch's files (issue 13 §1, 2 rewrite the MCP tool layer); they say why
# they stay outside the root there. Remove an entry when its class is gone or says so.


def _package_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(offprompt.__path__, "offprompt."):
        if info.name == "offprompt.__main__":
            continue
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == info.name:
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def _drawn_tree() -> dict[str, str]:
    """{class name: parent name} from the tree in errors.py's docstring."""
    doc = errors.__doc__ or ""
    lines = doc.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "OffpromptError")
    stack = ["OffpromptError"]
    parents: dict[str, str] = {}
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        branch = re.search(r"[├└]── (\w+)", line)
        assert branch is not None, f"not a tree line: {line!r}"
        depth = (branch.start() - lines[start].index("O")) // 4 + 1
        del stack[depth:]
        assert depth == len(stack), f"a branch skips a level: {line!r}"
        name = branch.group(1)
        assert name not in parents, f"{name} is drawn twice"
        parents[name] = stack[-1]
        stack.append(name)
    return parents


def test_the_drawn_tree_is_every_offprompt_error_under_its_real_parent() -> None:
    """Each subclass of OffpromptError in the package is drawn once, under its direct base."""
    actual = {
        cls.__name__: cls.__bases__[0].__name__
        for cls in _package_exceptions().values()
        if issubclass(cls, OffpromptError) and cls is not OffpromptError
    }
    assert _drawn_tree() == actual


def test_every_error_subclass_has_a_single_base() -> None:
    """The tree can only be drawn true when no error has two parents."""
    many = [n for n, c in _package_exceptions().items() if len(c.__bases__) != 1]
    assert [] == many


def test_an_exception_outside_the_root_says_why_it_stays_private() -> None:
    """A class not under OffpromptError (or its base) documents who catches it, and where."""
    outside = {
        name
        for name, cls in _package_exceptions().items()
        if not issubclass(cls, OffpromptError)
        and not any(PRIVATE.search(c.__doc__ or "") for c in cls.__mro__)
    }
    assert set() == outside


def test_every_drawn_class_is_in_offprompt_errors_under_its_drawn_parent() -> None:
    """Each name the docstring draws is an OffpromptError class defined in `offprompt.errors`
    (not only re-exported there), whose base is the drawn parent."""
    wrong = {}
    for name, parent in _drawn_tree().items():
        cls = getattr(errors, name, None)
        if not (inspect.isclass(cls) and issubclass(cls, OffpromptError)):
            wrong[name] = "not an OffpromptError class in offprompt.errors"
        elif cls.__module__ != "offprompt.errors":
            wrong[name] = f"defined in {cls.__module__}"
        elif cls.__bases__[0] is not getattr(errors, parent):
            wrong[name] = f"its base is {cls.__bases__[0].__name__}, not {parent}"
    assert {} == wrong


def test_offprompt_errors_imports_no_other_module_of_the_package() -> None:
    """Importing the error root loads nothing else of offprompt (the first reply's path and the
    guard hook load it, DESIGN §2)."""
    import subprocess
    import sys

    code = (
        "import sys, offprompt.errors\n"
        "print(sorted(m for m in sys.modules if m.startswith('offprompt')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert "['offprompt', 'offprompt.errors']" == loaded.stdout.strip()


def test_a_refusal_about_a_field_starts_with_its_name_and_keeps_the_rest() -> None:
    """`RefusedRequest.about` names the field as an agent wrote it, and keeps what follows."""
    refusal = errors.RefusedRequest.about(("secrets", 2, "provider"), " must be one of: a, b")
    assert ("secrets[2].provider must be one of: a, b", ("secrets", 2, "provider")) == (
        str(refusal),
        refusal.field,
    )
    assert " must be one of: a, b" == refusal.rest
