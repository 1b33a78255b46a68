"""Headless Chromium driven through its DevTools protocol over a pipe (--remote-debugging-pipe): open a
page, run script in it, move the mouse, take a screenshot. The standard library is enough (no
browser-automation package): commands go to the browser's fd 3 and answers come from its fd 4, each a
JSON message ended by a NUL byte.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-device-scale-factor=1", "--font-render-hinting=none")
TIMEOUT_S = 60


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class Chromium:
    """One browser with one page. Use as a context manager: the browser ends with the block."""

    def __init__(self, profile: Path):
        path = chromium_path()
        if path is None:
            raise FileNotFoundError("chromium is not installed")
        to_browser, self._commands = os.pipe()
        self._answers, from_browser = os.pipe()

        def wire():  # in the child: its fd 3 reads our commands, its fd 4 writes its answers
            os.dup2(to_browser, 3)
            os.dup2(from_browser, 4)

        self.process = subprocess.Popen([path, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={profile}",
                                         "about:blank"], preexec_fn=wire, pass_fds=(3, 4),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t["targetId"] for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Network"):
            self.call(f"{domain}.enable", session=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *_):
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError, TimeoutError, RuntimeError):
            self.call("Browser.close")
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._commands, self._answers):
            with contextlib.suppress(OSError):
                os.close(fd)

    # --- the protocol -------------------------------------------------------------------------------
    def call(self, method: str, session: bool = False, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            for answer in self._read():
                if answer.get("id") == self._next_id:
                    if "error" in answer:
                        raise RuntimeError(f"{method}: {answer['error']}")
                    return answer.get("result", {})
                self.events.append(answer)
            if time.monotonic() > deadline:
                raise TimeoutError(f"chromium did not answer {method}")

    def _read(self):
        while b"\0" not in self._buffer:
            chunk = os.read(self._answers, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self._buffer += chunk
        while b"\0" in self._buffer:
            message, _, self._buffer = self._buffer.partition(b"\0")
            yield json.loads(message)

    # --- what a test does -----------------------------------------------------------------------------
    def open(self, url: str, width: int, height: int) -> None:
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + TIMEOUT_S
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.evaluate("1")  # reads the events that came meanwhile
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"the page's script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def move_mouse(self, x: float, y: float) -> None:
        self.call("Input.dispatchMouseEvent", session=True, type="mouseMoved", x=x, y=y)

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot", session=True, format="png")["data"])

    def requests(self) -> list[str]:
        """Every URL the page asked for since it was opened."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]
