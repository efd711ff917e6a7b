#!/usr/bin/env python3
"""chromium-noscript.py URL PNG DOM [WIDTH HEIGHT]: render URL in headless
Chromium with scripts disabled (--blink-settings=scriptEnabled=false), save a
screenshot of its WIDTHxHEIGHT viewport to PNG and the document as Chromium
parsed it to DOM.

Chromium's own --screenshot and --dump-dom write nothing when scripts are
off (the headless shell needs them), so this drives it over the DevTools
protocol on a pipe (--remote-debugging-pipe: fd 3 in, fd 4 out, messages
ending in NUL), whose DOM and screenshot commands run no page script.
The Chromium flags are those of tests/analysis-lib.sh's chromium_run.
"""
import base64
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time


def main():
    url, png, dom = sys.argv[1:4]
    width, height = (sys.argv[4], sys.argv[5]) if len(sys.argv) > 5 else ("1200", "600")
    # the pipes' ends above 10: nothing of them is fd 3 or 4 before the child moves them there
    pipes = os.pipe() + os.pipe()
    to_chrome_r, to_chrome_w, from_chrome_r, from_chrome_w = (
        fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in pipes)
    for fd in pipes:
        os.close(fd)
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as ud:
        def child_fds():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        proc = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--user-data-dir=" + ud, "--remote-debugging-pipe",
             "--blink-settings=scriptEnabled=false", "--window-size=%s,%s" % (width, height),
             "about:blank"],
            preexec_fn=child_fds, close_fds=False,   # fds 3 and 4: set up in the child
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        out = os.fdopen(to_chrome_w, "wb", buffering=0)
        inp = os.fdopen(from_chrome_r, "rb", buffering=0)
        buf = b""
        next_id = [0]
        deadline = time.monotonic() + 60

        def read_msg():
            nonlocal buf
            while b"\0" not in buf:
                if time.monotonic() > deadline:
                    raise TimeoutError("chromium did not answer in 60 s")
                chunk = inp.read(65536)
                if not chunk:
                    raise EOFError("chromium closed the pipe")
                buf += chunk
            msg, buf = buf.split(b"\0", 1)
            return json.loads(msg)

        def call(method, params=None, session=None, until=None):
            """Send a command; return its result (and wait for event `until` too)."""
            next_id[0] += 1
            msg = {"id": next_id[0], "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = session
            out.write(json.dumps(msg).encode() + b"\0")
            result, seen = None, until is None
            while result is None or not seen:
                m = read_msg()
                if m.get("id") == next_id[0]:
                    if "error" in m:
                        raise RuntimeError("%s: %s" % (method, m["error"]))
                    result = m["result"]
                elif until and m.get("method") == until:
                    seen = True
            return result

        try:
            target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            call("Page.enable", session=session)
            call("Emulation.setScriptExecutionDisabled", {"value": True}, session=session)
            # the page's viewport is WIDTHxHEIGHT, as --screenshot's (the window's bars are not)
            call("Emulation.setDeviceMetricsOverride", {"width": int(width), "height": int(height),
                 "deviceScaleFactor": 1, "mobile": False}, session=session)
            call("Page.navigate", {"url": url}, session=session, until="Page.loadEventFired")
            root = call("DOM.getDocument", {"depth": -1}, session=session)["root"]
            html = call("DOM.getOuterHTML", {"nodeId": root["nodeId"]}, session=session)["outerHTML"]
            shot = call("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
            with open(dom, "w") as f:
                f.write(html)
            with open(png, "wb") as f:
                f.write(base64.b64decode(shot))
            call("Browser.close")
        finally:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


main()
