"""A pytest plug-in that points the ydb Python SDK's own tests at ``txconform serve --protocol ydb``.

ydb-platform/ydb-python-sdk's ``tests/conftest.py`` starts YDB in docker (pytest-docker) and gives
its tests an ``endpoint``, a ``driver`` and topics. Run its tests with ``--noconftest -p
probe.ydb_sdk`` (``scripts/sdk_topic_tests.py`` does) and these fixtures, of the same names, give
them instead a reference server of their own for each test, in this process, on a free loopback
port, with its trace written to ``$TXCONFORM_SDK_TRACES/<test>.jsonl`` when the test ends and what
it served and refused beside it (``<test>.served.txt``); the runner checks each trace with TLC
afterwards.

One server a test, because the engine's topics exist once a session (a dropped topic is not
created again) and the SDK's fixtures drop and create theirs for every test. The topics get the
engine's names: the SDK's topic of ready messages (``topic_with_messages``) is the engine's source
``A``, its empty topic (``topic_path``) the target ``B``, and its consumer (``topic_consumer``) the
engine's ``c``; every other topic keeps the SDK's name, which the server refuses (the engine has
two topics). The fixture writes A's messages with a writer outside a transaction, as the SDK's
does; the server takes such writes as the data of the messages the spec's A holds from the start
(``Front.preload``), and a test that uses it gets an engine whose A holds just those 4 messages
(``--workload copy:msgs=4``). Nothing else differs from the SDK's fixtures (its ``tests/conftest.py``).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from trace_check.traces import plugins
from trace_check.traces.protocol import ServeOptions

TRACES_ENV = "TXCONFORM_SDK_TRACES"
WORKLOAD_ENV = "TXCONFORM_SDK_WORKLOAD"  # the served engine's shape (copy:msgs=N,batch=N,txns=N)
DATABASE = "/local"
SOURCE, TARGET, CONSUMER = "A", "B", "c"  # the engine's (ref_impl/ydb/state.py, serve/front.py)
T = 15  # the SDK's own fixtures wait 15 s for the driver
READY = ((b"123", b"456"), (b"789", b"0"))  # topic_with_messages: what the SDK's fixture writes, two write_with_ack


def trace_path(nodeid: str) -> Path | None:
    root = os.environ.get(TRACES_ENV)
    if not root:
        return None
    return Path(root) / (re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_") + ".jsonl")


@pytest.fixture
def txconform_ydb_server(request: Any) -> Iterator[Any]:
    plugin = plugins.get("ydb")
    assert plugin.serve is not None
    workload = os.environ.get(WORKLOAD_ENV, "")
    if not workload and "topic_with_messages" in request.fixturenames:
        workload = f"copy:msgs={sum(map(len, READY))}"  # A holds exactly the messages the SDK's fixture writes
    server = plugin.serve(ServeOptions(port=0, trace=trace_path(request.node.nodeid), workload=workload)).start()
    try:
        yield server
    finally:
        path = server.stop()
        if path is not None:  # what it served and refused, beside the trace, for the runner's table
            path.with_suffix(".served.txt").write_text("\n".join(server.summary()[1:]) + "\n")


@pytest.fixture
def endpoint(txconform_ydb_server: Any) -> str:
    return f"grpc://{txconform_ydb_server.bootstrap}"


@pytest.fixture
def database() -> str:
    return DATABASE


@pytest.fixture
async def driver(endpoint: str, database: str) -> AsyncIterator[Any]:
    import ydb
    import ydb.aio

    d = ydb.aio.Driver(driver_config=ydb.DriverConfig(endpoint, database))  # type: ignore[attr-defined]  # ydb.aio's re-export
    await d.wait(timeout=T)
    yield d
    await d.stop(timeout=10)


@pytest.fixture
def driver_sync(endpoint: str, database: str) -> Iterator[Any]:
    import ydb

    d = ydb.Driver(driver_config=ydb.DriverConfig(endpoint, database))
    d.wait(timeout=T)
    yield d
    d.stop(timeout=10)


@pytest.fixture
def topic_consumer() -> str:
    return CONSUMER


async def _fresh_topic(driver: Any, path: str, consumer: str, **kw: Any) -> str:
    import ydb

    with contextlib.suppress(ydb.issues.SchemeError):
        await driver.topic_client.drop_topic(path)
    await driver.topic_client.create_topic(path=path, consumers=[consumer], **kw)
    return path


@pytest.fixture
async def topic_path(driver: Any, topic_consumer: str, database: str) -> str:
    return await _fresh_topic(driver, f"{database}/{TARGET}", topic_consumer)


@pytest.fixture
async def topic2_path(driver: Any, topic_consumer: str, database: str) -> str:
    return await _fresh_topic(driver, f"{database}/test-topic2", topic_consumer)


@pytest.fixture
async def topic_with_two_partitions_path(driver: Any, topic_consumer: str, database: str) -> str:
    return await _fresh_topic(driver, f"{database}/test-topic-two-partitions", topic_consumer,
                              min_active_partitions=2, partition_count_limit=2)


async def _written(driver: Any, path: str, batches: list[list[Any]]) -> str:
    import ydb

    writer = driver.topic_client.writer(path, producer_id="fixture-producer-id", codec=ydb.TopicCodec.RAW)
    for batch in batches:
        await writer.write_with_ack(batch)
    await writer.close()
    return path


@pytest.fixture
async def topic_with_messages(driver: Any, topic_consumer: str, database: str) -> str:
    import ydb

    path = await _fresh_topic(driver, f"{database}/{SOURCE}", topic_consumer)
    return await _written(driver, path, [[ydb.TopicWriterMessage(data=d) for d in batch] for batch in READY])


@pytest.fixture
async def topic_with_messages_with_metadata(driver: Any, topic_consumer: str, database: str) -> str:
    import ydb

    path = await _fresh_topic(driver, f"{database}/test-topic-with-messages-with-metadata", topic_consumer)
    m = ydb.TopicWriterMessage
    return await _written(driver, path, [[m(data=b"123", metadata_items={"key": "value"}),
                                          m(data=b"456", metadata_items={"key": b"value"})]])


@pytest.fixture
async def topic_reader(driver: Any, topic_consumer: str, topic_path: str) -> AsyncIterator[Any]:
    reader = driver.topic_client.reader(topic=topic_path, consumer=topic_consumer)
    yield reader
    await reader.close()


@pytest.fixture
def topic_reader_sync(driver_sync: Any, topic_consumer: str, topic_path: str) -> Iterator[Any]:
    reader = driver_sync.topic_client.reader(topic=topic_path, consumer=topic_consumer)
    yield reader
    reader.close()
