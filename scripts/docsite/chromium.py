"""Headless Chromium (Debian's ``chromium``) driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: commands on its fd 3, answers on its fd 4, each a JSON text ended
by a NUL byte), so no websocket client or browser driver is needed. Started in a new empty
profile with every call bounded in time, and stopped by its pid."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-default-browser-check", "--mute-audio", "--hide-scrollbars", "--window-size=1280,900",
    "--remote-debugging-pipe",
)
HOW_TO_INSTALL = "install Debian's chromium (apt-get install -y chromium) or set TXCONFORM_CHROMIUM to its path"


class BrowserError(Exception):
    """Chromium did not start, answered an error, or did not answer in time."""


def find_chromium() -> str | None:
    """The browser to drive: $TXCONFORM_CHROMIUM, else chromium on the PATH."""
    return os.environ.get("TXCONFORM_CHROMIUM") or shutil.which("chromium")


@attrs.define
class Browser:
    """One Chromium process and one page (tab) attached to it; use as a context manager."""

    proc: subprocess.Popen[bytes]
    commands: int  # our end of the pipe Chromium reads commands from
    answers: int  # our end of the pipe Chromium writes to
    profile: tempfile.TemporaryDirectory[str]
    session: str = ""
    events: list[dict[str, Any]] = attrs.Factory(list)
    _buffer: bytes = b""
    _next_id: int = 0

    @classmethod
    def start(cls, executable: str, timeout: float = 30.0) -> Browser:
        profile = tempfile.TemporaryDirectory(prefix="txconform-chromium-")
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # Chromium wants the pipe on its fds 3 and 4; bash puts it there (preexec_fn is unsafe with
        # threads), from fds above 4 so that no redirection overwrites another's source.
        theirs = [fcntl.fcntl(fd, fcntl.F_DUPFD, 5) for fd in (to_browser_r, from_browser_w)]
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)
        shell = f'exec "$0" "$@" 3<&{theirs[0]} 4>&{theirs[1]} {theirs[0]}<&- {theirs[1]}>&-'
        argv = ["bash", "-c", shell, executable, *FLAGS, f"--user-data-dir={profile.name}", "about:blank"]
        proc = subprocess.Popen(argv, pass_fds=tuple(theirs), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        for fd in theirs:
            os.close(fd)
        browser = cls(proc, to_browser_w, from_browser_r, profile)
        try:
            target = browser.call("Target.createTarget", {"url": "about:blank"}, timeout=timeout)["targetId"]
            browser.session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True}, timeout=timeout)["sessionId"]
        except BaseException:
            browser.close()
            raise
        return browser

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
        """Send a command (to the page once attached) and return its result; events that arrive
        meanwhile are kept in ``events``."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session:
            message["sessionId"] = self.session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read(deadline, method)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error'].get('message', answer['error'])}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            if "method" in answer:
                self.events.append(answer)

    def wait_for(self, event: str, timeout: float) -> dict[str, Any]:
        """The first event named ``event`` not yet taken (waiting for it at most ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == event:
                    return self.events.pop(i)
            answer = self._read(deadline, event)
            if "method" in answer:
                self.events.append(answer)

    def _read(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"Chromium did not answer {waiting_for} in time")
            ready, _, _ = select.select([self.answers], [], [], left)
            if ready:
                chunk = os.read(self.answers, 1 << 20)
                if not chunk:
                    raise BrowserError(f"Chromium exited (code {self.proc.poll()}) while we waited for {waiting_for}")
                self._buffer += chunk
        text, _, self._buffer = self._buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(text)
        return message

    def close(self) -> None:
        """Stop Chromium by its pid (and its process group: the renderers), then remove the profile."""
        for fd in (self.commands, self.answers):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.profile.cleanup()


def screenshot(browser: Browser, path: Path) -> None:
    import base64

    data = browser.call("Page.captureScreenshot", {"format": "png"})["data"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(data))
