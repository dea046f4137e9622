"""Under CI=true no test skips: a skip there means a part .ci/run should have installed is
missing, so it is reported as a failure that keeps the skip's reason. Run by hand, skips stay."""

import os
from collections.abc import Generator

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    expected_failure = hasattr(report, "wasxfail")
    if os.environ.get("CI") == "true" and report.skipped and not expected_failure:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, where nothing may skip: {reason}"
    return report
