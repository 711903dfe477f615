"""The built site over HTTP on 127.0.0.1, from a thread of this process; the specs, registries and
traces the pages link are served as text so that a browser shows them."""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TEXT = {ext: "text/plain; charset=utf-8" for ext in (".tla", ".toml", ".jsonl", ".py", ".cfg", ".txt")}


class _Handler(http.server.SimpleHTTPRequestHandler):
    def guess_type(self, path: str | os.PathLike[str]) -> str:
        return TEXT.get(Path(path).suffix) or super().guess_type(path)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _server(site: Path, port: int) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_Handler, directory=str(site))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


@contextmanager
def served(site: Path) -> Iterator[str]:
    """Serve ``site`` on a free loopback port for the ``with`` block; yields the base URL."""
    server = _server(site, 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def serve_forever(site: Path, port: int) -> None:
    server = _server(site, port)
    print(f"docs: serving {site} on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
