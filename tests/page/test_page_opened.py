"""A page "opened" (DESIGN §4) means a GET of the page was served, and nothing else."""

from collections.abc import Callable

from aiohttp.test_utils import TestClient

from offprompt.store import RequestRecord

from .conftest import path_of


async def test_get_of_the_page_records_that_it_was_opened(
    client: TestClient, make_request: Callable[..., RequestRecord]
) -> None:
    """A served GET of the form sets `delivery.page_opened`."""
    req = make_request()
    response = await client.get(path_of(req))
    assert (response.status, req.delivery.page_opened) == (200, True)


async def test_head_and_status_do_not_count_as_opened(
    client: TestClient, make_request: Callable[..., RequestRecord]
) -> None:
    """A HEAD (a prefetch, not a browser showing it) and the status poll leave it unopened."""
    req = make_request()
    head = await client.head(path_of(req))
    status = await client.get(path_of(req) + "/status")
    assert (head.status, status.status, req.delivery.page_opened) == (200, 200, False)


async def test_refused_get_does_not_count_as_opened(
    client: TestClient, make_request: Callable[..., RequestRecord]
) -> None:
    """A GET the guards refuse (wrong Host) never reached a page: still unopened."""
    req = make_request()
    response = await client.get(path_of(req), headers={"Host": "evil.example"})
    assert (response.status, req.delivery.page_opened) == (421, False)
