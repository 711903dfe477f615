"""A pytest plugin: a serving broker for your own tests, whose session is checked against the spec.

Enable it in a conftest.py with ``pytest_plugins = ["trace_check.testing"]``; then

    def test_my_app(txconform_broker):
        run_my_app(bootstrap_servers=txconform_broker.bootstrap)

starts a broker on 127.0.0.1 (a free port; the Kafka plug-in's ``txconform serve``) for the test, stops it afterwards, writes the session's
trace to the test's tmp_path (``session.jsonl``) and checks it with TLC: the test fails when the
trace is not a behaviour of the spec or an invariant is violated, with the checker's verdict.
Options go in a marker:

    @pytest.mark.txconform_serve(version="TV2", partitions=3, bugs=("lso_inclusive",), faults="drop@EndTxn:1",
                                 check=False)

``check=False`` skips the check (the trace is still written); ``txconform_check(path)`` runs it
yourself and returns the verdict.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trace_check.traces import plugins
from trace_check.traces.options import CheckOptions
from trace_check.traces.protocol import ServeOptions, Server

TRACE_NAME = "session.jsonl"


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "txconform_serve(**options): options of the txconform_broker fixture "
                            "(version, partitions, bugs, faults, auto_create, check)")


def txconform_check(path: Path, timeout: float = 300.0) -> Any:
    """The checker's verdict on a session trace (``trace_check.traces.verdicts.Verdict``)."""
    from trace_check.traces.reader import read_trace
    from trace_check.traces.validation import check_trace

    return check_trace(read_trace(path), CheckOptions(engine="tlc", timeout=timeout))


@pytest.fixture
def txconform_broker(request: Any, tmp_path: Path) -> Iterator[Server]:
    marker = request.node.get_closest_marker("txconform_serve")
    kw = dict(marker.kwargs) if marker else {}
    check = kw.pop("check", True)
    if not isinstance(kw.get("bugs", ""), str):
        kw["bugs"] = "+".join(kw["bugs"])
    plugin = plugins.get(kw.pop("protocol", "kafka"))
    assert plugin.serve is not None, f"protocol {plugin.name} serves no clients"
    running = plugin.serve(ServeOptions(trace=tmp_path / TRACE_NAME, **kw)).start()
    try:
        yield running
    finally:
        path = running.stop()
    if check and path is not None:
        v = txconform_check(path)
        if not v.ok:
            from trace_check.traces.verdicts import verdict_lines

            pytest.fail("the session's trace is not a behaviour of the spec:\n" + "\n".join(verdict_lines(v, path)),
                        pytrace=False)
