#!/usr/bin/env python3
"""The HTML report in a real browser: headless Chromium driven by chromedriver
over the WebDriver HTTP protocol (standard library only).

It writes reports with the memplan tool and asserts on the rendered page: one
rectangle per buffer, the peak and lower bound of the plan, a tooltip naming
the buffer under a real mouse, zoom, plans side by side, no markup injected
by names, small buffers aggregated past 50000 per pool, and a screenshot that
is not blank; what was planned (a symbolic plan's values, bucket and peak
expression; a reordered plan's op order and the figures of the graph's own
order), one byte scale and round ticks in the unit shown on comparison pages,
the peak step marked on the placement picture, no planning time for a plan
read from a file, the live bytes and bytes missing of an input that cannot
fit, and traced tensors' module and source line. With --screenshots=DIR the
pages' pictures for the documentation are written there. A missing browser
is a failure, never a skip.

usage: report_browser_test.py --tool=MEMPLAN --data=BENCH_DATA_DIR
           --chromium=PATH --chromedriver=PATH --work=DIR [--screenshots=DIR]
"""

import argparse
import base64
import json
import math
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib

FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print("FAIL: " + message, flush=True)
    return condition


# ---------------------------------------------------------------------------
# WebDriver over HTTP.


class Browser:
    def __init__(self, chromium, chromedriver, work):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = open(os.path.join(work, "chromedriver.log"), "w")
        self.driver = subprocess.Popen(
            [chromedriver, "--port=%d" % self.port, "--allowed-ips=127.0.0.1"],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.base = "http://127.0.0.1:%d" % self.port
        deadline = time.time() + 30
        while True:
            try:
                if self._call("GET", "/status")["value"].get("ready"):
                    break
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if time.time() > deadline:
                raise RuntimeError("chromedriver did not start")
            time.sleep(0.1)
        self.profile = tempfile.mkdtemp(prefix="memplan-chromium-", dir=work)
        caps = {
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": chromium,
                        "args": [
                            "--headless",
                            "--no-sandbox",
                            "--disable-gpu",
                            "--disable-quic",
                            "--no-first-run",
                            "--disable-background-networking",
                            "--disable-component-update",
                            "--disable-sync",
                            "--disable-dev-shm-usage",
                            "--user-data-dir=" + self.profile,
                            "--window-size=1400,1000",
                        ],
                    },
                }
            }
        }
        self.session = self._call("POST", "/session", caps)["value"][
            "sessionId"
        ]

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise RuntimeError(
                "%s %s: %s" % (method, path, error.read()[:2000])
            )

    def cmd(self, method, path, body=None):
        return self._call(method, "/session/%s%s" % (self.session, path), body)[
            "value"
        ]

    def open(self, path):
        self.cmd("POST", "/url", {"url": "file://" + os.path.abspath(path)})

    def js(self, script, *args):
        return self.cmd(
            "POST", "/execute/sync", {"script": script, "args": list(args)}
        )

    def wait_ready(self, seconds):
        start = time.time()
        while time.time() - start < seconds:
            if self.js(
                "return !!(window.memplanReport && "
                "window.memplanReport.ready);"
            ):
                return time.time() - start
            time.sleep(0.05)
        return None

    def poll(self, script, done, seconds, what):
        """Runs `script` until `done` holds of its value, for at most
        `seconds`; returns the last value, or records a failure naming
        `what` and the last value when time runs out."""
        deadline = time.time() + seconds
        while True:
            value = self.js(script)
            if done(value):
                return value
            if time.time() > deadline:
                check(
                    False,
                    "%s: not within %g s (last seen: %r)"
                    % (what, seconds, value),
                )
                return value
            time.sleep(0.05)

    def mouse_to(self, x, y):
        self.cmd(
            "POST",
            "/actions",
            {
                "actions": [
                    {
                        "type": "pointer",
                        "id": "mouse",
                        "parameters": {"pointerType": "mouse"},
                        "actions": [
                            {
                                "type": "pointerMove",
                                "duration": 0,
                                "x": int(round(x)),
                                "y": int(round(y)),
                                "origin": "viewport",
                            }
                        ],
                    }
                ]
            },
        )

    def wheel(self, x, y, delta):
        self.cmd(
            "POST",
            "/actions",
            {
                "actions": [
                    {
                        "type": "wheel",
                        "id": "wheel",
                        "actions": [
                            {
                                "type": "scroll",
                                "duration": 0,
                                "x": int(round(x)),
                                "y": int(round(y)),
                                "deltaX": 0,
                                "deltaY": delta,
                                "origin": "viewport",
                            }
                        ],
                    }
                ]
            },
        )
        self.cmd("DELETE", "/actions")

    def screenshot(self, css=None):
        """The page, or the first element matching `css`, as PNG bytes."""
        if css is None:
            return base64.b64decode(self.cmd("GET", "/screenshot"))
        found = self.cmd(
            "POST", "/element", {"using": "css selector", "value": css}
        )
        element = list(found.values())[0]
        return base64.b64decode(
            self.cmd("GET", "/element/%s/screenshot" % element)
        )

    def close(self):
        try:
            self._call("DELETE", "/session/" + self.session)
        except Exception:  # the driver goes down next anyway
            pass
        self.driver.terminate()
        try:
            self.driver.wait(10)
        except subprocess.TimeoutExpired:
            self.driver.kill()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


# ---------------------------------------------------------------------------
# A PNG decoder (8-bit RGB or RGBA, non-interlaced: what Chromium writes), to
# count the colours of a screenshot.


def png_pixels(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        chunk = png[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(
                ">IIBBBBB", chunk
            )
            assert (
                depth == 8 and color in (2, 6) and interlace == 0
            ), "unexpected PNG format"
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous, at = [], bytearray(stride), 0
    for _ in range(height):
        kind = raw[at]
        line = bytearray(raw[at + 1 : at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                pred = (
                    left
                    if pa <= pb and pa <= pc
                    else up
                    if pb <= pc
                    else up_left
                )
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def colour_stats(png):
    width, height, channels, rows = png_pixels(png)
    colours, not_white = set(), 0
    for row in rows[::2]:
        for x in range(0, width * channels, channels * 2):
            pixel = row[x : x + 3]
            colours.add(pixel)
            if pixel != b"\xff\xff\xff":
                not_white += 1
    return len(colours), not_white / max(1, (height // 2) * (width // 2))


# ---------------------------------------------------------------------------


def run_tool(tool, *args):
    result = subprocess.run(
        [tool] + list(args), capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0:
        raise RuntimeError(
            "memplan %s failed (%d): %s"
            % (" ".join(args), result.returncode, result.stderr)
        )
    return result


PLACEMENTS = "return window.memplanReport.placements();"


def hover_check(browser, plan_index, buffer_id, tensor, what):
    """Moves the mouse over a buffer and checks the tooltip names it."""
    center = browser.js(
        "return window.memplanReport.bufferCenter(arguments[0],"
        " arguments[1]);",
        plan_index,
        buffer_id,
    )
    if not check(
        center is not None, what + ": buffer %d has no rectangle" % buffer_id
    ):
        return None
    browser.mouse_to(center["x"], center["y"])
    tip = None
    for _ in range(40):  # the redraw after a move is one animation frame
        tip = browser.js(
            "const t = document.getElementById('tooltip');"
            "return {hidden: t.hidden, text: t.textContent,"
            " buffer: t.dataset.buffer, tensor: t.dataset.tensor};"
        )
        if not tip["hidden"]:
            break
        time.sleep(0.05)
    check(not tip["hidden"], what + ": no tooltip over buffer %d" % buffer_id)
    check(
        tip["buffer"] == str(buffer_id),
        what
        + ": tooltip shows buffer %s, expected %d" % (tip["buffer"], buffer_id),
    )
    check(
        tensor in tip["text"],
        what + ": tooltip %r does not name %r" % (tip["text"][:300], tensor),
    )
    return tip


def zoom_check(browser, n):
    """The wheel zooms in: fewer steps in view, what is out of view culled.
    The redraw comes on a later animation frame: polled for, 10 s at most."""
    center = browser.js("return window.memplanReport.bufferCenter(0, 0);")
    view = "return document.querySelector('canvas.placement')" ".dataset.view;"
    before = browser.js(view)

    def width(v):
        low, high = (float(x) for x in v.split(",")[:2])
        return high - low

    browser.wheel(center["x"] + 5, center["y"], -600)
    after = browser.poll(
        view,
        lambda v: width(v) < width(before),
        10,
        "resnet50: the wheel zooms in (view %s)" % before,
    )
    browser.poll(
        "return window.memplanReport.placements()[0];",
        lambda p: p["drawn"] + p["culled"] == n and p["culled"] > 0,
        10,
        "resnet50: zoomed in to %s, the steps out of view are "
        "culled (%d buffers)" % (after, n),
    )


def test_resnet50(browser, tool, data, work):
    graph_path = os.path.join(data, "models", "resnet50.json")
    plan_path = os.path.join(work, "resnet50.plan.json")
    html = os.path.join(work, "resnet50.html")
    run_tool(
        tool,
        "plan",
        graph_path,
        "--planner=greedy_by_size",
        "--out=" + plan_path,
    )
    run_tool(tool, "report", graph_path, plan_path, "--html=" + html)
    plan = json.load(open(plan_path))
    graph = json.load(open(graph_path))
    browser.open(html)
    check(browser.wait_ready(30) is not None, "resnet50: the report never ran")
    placements = browser.js(PLACEMENTS)
    check(
        len(placements) == 1,
        "resnet50: %d placement pictures, expected 1" % len(placements),
    )
    n = len(plan["buffers"])
    p = placements[0]
    check(
        p["buffers"] == n
        and p["drawn"] == n
        and p["aggregated"] == 0
        and p["culled"] == 0,
        "resnet50: drew %s, expected one rectangle per buffer (%d)" % (p, n),
    )
    canvas = browser.js(
        "const c = document.querySelector('canvas.placement');"
        "return [c.dataset.buffers, c.dataset.drawn];"
    )
    check(canvas == [str(n), str(n)], "resnet50: canvas data %s" % canvas)
    shown = browser.js(
        "const s = document.querySelector('section.plan');"
        "return {peak: s.dataset.peak, bound: s.dataset.lowerBound,"
        " peakText: s.querySelector('.stat-peak').textContent,"
        " boundText: s.querySelector('.stat-lower-bound').textContent,"
        " proven: s.querySelector('.stat-proven').textContent,"
        " heading: s.querySelector('.peak-heading').textContent,"
        " firstPeak: s.querySelector('table.peak-tensors tr[data-buffer] td')"
        "   .textContent};"
    )
    check(
        shown["peak"] == str(plan["peak"])
        and "peak %d bytes" % plan["peak"] in shown["peakText"],
        "resnet50: peak shown %s, plan %d" % (shown, plan["peak"]),
    )
    check(
        shown["bound"] == str(plan["lower_bound"])
        and "lower bound %d bytes" % plan["lower_bound"] in shown["boundText"],
        "resnet50: lower bound shown %s, plan %d"
        % (shown, plan["lower_bound"]),
    )
    check(
        ("yes" if plan["proven_optimal"] else "no") in shown["proven"],
        "resnet50: proven optimal shown as %r" % shown["proven"],
    )
    check(
        "%d bytes" % plan["lower_bound"] in shown["heading"],
        "resnet50: the peak step heading %r" % shown["heading"],
    )
    check_plan_page(browser, "resnet50")
    time_text = browser.js(
        "return document.querySelector('section.plan .stat-time')"
        ".textContent;"
    )
    check(
        time_text == "read from a plan file",
        "resnet50: a plan read from a file shows %r" % time_text,
    )

    # A real mouse over the largest buffer; its producer and a reader are
    # named from the graph.
    largest = max(range(n), key=lambda b: (plan["buffers"][b]["size"], -b))
    tensor = plan["buffers"][largest]["tensors"][0]
    tip = hover_check(browser, 0, largest, tensor, "resnet50")
    producer = [op["name"] for op in graph["ops"] if tensor in op["outputs"]]
    readers = [op["name"] for op in graph["ops"] if tensor in op["inputs"]]
    if tip is not None and producer:
        check(
            producer[0] in tip["text"],
            "resnet50: the tooltip lacks the producer %s" % producer[0],
        )
    if tip is not None and readers:
        check(
            readers[0] in tip["text"],
            "resnet50: the tooltip lacks the reader %s" % readers[0],
        )

    zoom_check(browser, n)

    png = browser.screenshot("canvas.placement")
    with open(os.path.join(work, "resnet50.png"), "wb") as f:
        f.write(png)
    colours, covered = colour_stats(png)
    check(
        colours >= 8 and covered > 0.05,
        "resnet50: the screenshot looks blank (%d colours, %.3f not white)"
        % (colours, covered),
    )


TICK = re.compile(r"^(\d+(?:\.\d+)?) (B|KiB|MiB|GiB|TiB)$")


def check_ticks(ticks, what):
    """Byte ticks: one unit, labelled in it, at a round step (1, 2 or 5
    times a power of ten of the unit)."""
    labels = (ticks or "").split("|")
    parsed = [TICK.match(t) for t in labels]
    if not check(
        len(labels) >= 2 and all(parsed),
        what + ": tick labels %r" % labels,
    ):
        return
    check(
        len({m.group(2) for m in parsed}) == 1,
        what + ": ticks in several units %r" % labels,
    )
    values = [float(m.group(1)) for m in parsed]
    steps = {round(b - a, 6) for a, b in zip(values, values[1:])}
    step = steps.pop() if len(steps) == 1 else None
    mantissa = step / 10 ** math.floor(math.log10(step)) if step else None
    check(
        step is not None and any(abs(mantissa - m) < 1e-6 for m in (1, 2, 5)),
        what + ": ticks not at one round step %r" % labels,
    )


def check_plan_page(browser, what):
    """The peak step and the buffers alive there marked on every placement
    picture, round ticks, fragmentation measured against the bound."""
    pictures = browser.js(
        "return [...document.querySelectorAll('canvas.placement')].map(c =>"
        " [c.dataset.peakStep, +c.dataset.peakMarked, +c.dataset.peakAlive,"
        " c.dataset.ticks]);"
    )
    for step, marked, alive, ticks in pictures:
        check(
            step not in (None, "-1") and (alive or 0) > 0 and marked == alive,
            what
            + ": peak step %s, %d of %d buffers alive there outlined"
            % (step, marked, alive),
        )
        check_ticks(ticks, what + " placement")
    for ticks in browser.js(
        "return [...document.querySelectorAll('canvas.live')]"
        ".map(c => c.dataset.ticks);"
    ):
        check_ticks(ticks, what + " live bytes")
    heads = browser.js(
        "return [...document.querySelectorAll('table.pools th')]"
        ".map(t => t.textContent);"
    )
    check(
        "fragmentation" in heads and "mean fragmentation" not in heads,
        what + ": pool table heads %s" % heads,
    )


def page_facts(browser):
    return browser.js(
        "const f = {};"
        "for (const r of document.querySelectorAll('#facts tr'))"
        "  f[r.dataset.fact] = r.querySelector('td').textContent;"
        "return f;"
    )


def save_screenshot(browser, directory, name):
    if directory:
        with open(os.path.join(directory, name), "wb") as f:
            f.write(browser.screenshot())


def test_side_by_side(browser, tool, data, work, shots=None):
    graph_path = os.path.join(data, "models", "resnet18.json")
    html = os.path.join(work, "resnet18.html")
    run_tool(
        tool,
        "report",
        graph_path,
        "--planners=naive,greedy_by_size",
        "--html=" + html,
    )
    browser.open(html)
    check(browser.wait_ready(30) is not None, "side by side: never ran")
    plans = browser.js(
        "return [...document.querySelectorAll('section.plan')].map("
        "s => [s.dataset.planner, +s.dataset.peak]);"
    )
    check(
        [p[0] for p in plans] == ["naive", "greedy_by_size"],
        "side by side: plans %s" % plans,
    )
    check(
        len(plans) == 2 and plans[0][1] > plans[1][1],
        "side by side: naive's peak should exceed greedy's: %s" % plans,
    )
    rows = browser.js(
        "return document.querySelectorAll("
        "'#compare-table tr[data-planner]').length;"
    )
    check(rows == 2, "side by side: %d rows in the comparison" % rows)
    placements = browser.js(PLACEMENTS)
    check(
        len(placements) == 2
        and all(p["drawn"] == p["buffers"] > 0 for p in placements),
        "side by side: drew %s" % placements,
    )
    # One byte scale for both plans: naive's height compares with greedy's.
    scales = browser.js(
        "return ['canvas.placement', 'canvas.live'].map(q =>"
        " [...document.querySelectorAll(q)].map(c => c.dataset.ymax));"
    )
    for kind, ymax in zip(("placement", "live"), scales):
        check(
            len(ymax) == 2 and ymax[0] == ymax[1],
            "side by side: %s pictures on scales %s" % (kind, ymax),
        )
    check_plan_page(browser, "side by side")
    times = browser.js(
        "return [...document.querySelectorAll('.stat-time')]"
        ".map(t => t.textContent);"
    )
    check(
        len(times) == 2 and all(t.endswith(" ms") for t in times),
        "side by side: plans made here show their time: %s" % times,
    )
    save_screenshot(browser, shots, "report_compare.png")


def test_labels(browser, tool, data, work):
    """Op names sharing a long prefix stay apart on the axis: cut in the
    middle, their ends kept."""
    graph_path = os.path.join(data, "models", "mobilenet_v2.json")
    html = os.path.join(work, "labels.html")
    run_tool(tool, "report", graph_path, "--planner=naive", "--html=" + html)
    browser.open(html)
    check(browser.wait_ready(30) is not None, "labels: never ran")
    names = [
        "/features/features.2/conv/conv.0/conv.0.0/Conv",
        "/features/features.2/conv/conv.0/conv.0.2/Clip",
    ]
    cut = browser.js(
        "return arguments[0].map(n => window.memplanReport.shorten(n, 16));",
        names,
    )
    check(
        len(set(cut)) == 2
        and all(len(c) == 16 for c in cut)
        and cut[1].endswith("Clip"),
        "labels: %s cut to %s" % (names, cut),
    )


def test_symbolic(browser, tool, data, work, shots=None):
    """A symbolic plan's page says the values, the bucket, the peak
    expression in the graph's dims and the range it holds for."""
    graph_path = os.path.join(data, "symbolic", "transformer_encoder.json")
    html = os.path.join(work, "symbolic.html")
    run_tool(tool, "report", graph_path, "--dim", "seq=500", "--html=" + html)
    browser.open(html)
    check(browser.wait_ready(30) is not None, "symbolic: never ran")
    facts = page_facts(browser)
    check(
        facts.get("dims", "").startswith("seq=500"),
        "symbolic: the values shown: %s" % facts,
    )
    check("seq in [" in facts.get("bucket", ""), "symbolic: bucket %s" % facts)
    peak = facts.get("peak-expression", "")
    check(
        "seq" in peak and "seq_div" not in peak and ", for seq in [" in peak,
        "symbolic: the peak expression %r" % peak,
    )
    check("6513000 bytes" in facts.get("arena", ""), "symbolic: %s" % facts)
    check_plan_page(browser, "symbolic")
    save_screenshot(browser, shots, "report_symbolic.png")


def test_reordered(browser, tool, data, work):
    """A reordered plan's page says so, with the op order used and the
    figures of the graph's own order and of any order."""
    graph_path = os.path.join(data, "models", "resnet18.json")
    html = os.path.join(work, "reordered.html")
    run_tool(tool, "report", graph_path, "--reorder=memory", "--html=" + html)
    browser.open(html)
    check(browser.wait_ready(30) is not None, "reordered: never ran")
    facts = page_facts(browser)
    check(
        facts.get("reordered", "").startswith("reordered by memory: "),
        "reordered: %s" % facts,
    )
    check(
        facts.get("op-order", "").count(", ") >= 5,
        "reordered: the op order %r" % facts.get("op-order"),
    )
    check(
        re.match(
            r"lower bound \d+ bytes; in this order \d+ bytes",
            facts.get("own-order", ""),
        ),
        "reordered: the graph's own order %r" % facts.get("own-order"),
    )
    check(
        facts.get("order-bound", "").startswith("at least "),
        "reordered: any order %r" % facts.get("order-bound"),
    )
    bound = browser.js(
        "const s = document.querySelector('.stat-order-bound');"
        "return s ? s.textContent : null;"
    )
    check(
        bound is not None and bound.startswith("any op order: at least"),
        "reordered: the bound over orders in the stats: %r" % bound,
    )


def test_cannot_fit(browser, tool, data, work, shots=None):
    """No plan fits --capacity: the page draws the live bytes against the
    capacity and the lower bound, and says how many bytes are missing."""
    graph_path = os.path.join(data, "models", "resnet18.json")
    html = os.path.join(work, "full.html")
    result = subprocess.run(
        [tool, "report", graph_path, "--capacity=5M", "--html=" + html],
        capture_output=True,
        text=True,
        timeout=600,
    )
    check(result.returncode == 1, "cannot fit: exit %d" % result.returncode)
    browser.open(html)
    check(browser.wait_ready(30) is not None, "cannot fit: never ran")
    shown = browser.js(
        "const s = document.querySelector('section.unplanned');"
        "if (!s) return null;"
        "const c = s.querySelector('canvas.live');"
        "return {missing: +s.dataset.missing, bound: +s.dataset.lowerBound,"
        " capacity: +s.dataset.capacity,"
        " text: s.querySelector('.stat-missing').textContent,"
        " ticks: c && c.dataset.ticks,"
        " rows: s.querySelectorAll('table.peak-tensors tr[data-buffer]')"
        "   .length,"
        " summary: document.getElementById('summary').textContent};"
    )
    if not check(shown is not None, "cannot fit: no section of live bytes"):
        return
    check(
        shown["missing"] > 0
        and shown["capacity"] + shown["missing"] == shown["bound"]
        and "missing %d bytes" % shown["missing"] in shown["text"],
        "cannot fit: %s" % shown,
    )
    check(shown["rows"] > 0, "cannot fit: no tensors at the peak: %s" % shown)
    check(
        shown["ticks"] is not None and not shown["summary"].startswith("0 "),
        "cannot fit: nothing drawn: %s" % shown,
    )
    save_screenshot(browser, shots, "report_capacity.png")


def test_source(browser, tool, work):
    """A traced tensor's module and source line in its tooltip and in the
    table of the peak."""
    graph = {
        "format": "memplan-graph-v1",
        "name": "traced",
        "tensors": [
            {"name": "x", "size": 64, "kind": "input"},
            {
                "name": "conv",
                "size": 4096,
                "source": {
                    "module": "layer1.0.conv1",
                    "file": "models/net.py",
                    "line": 42,
                },
            },
            {"name": "y", "size": 64, "kind": "output"},
        ],
        "ops": [
            {"name": "op0", "inputs": ["x"], "outputs": ["conv"]},
            {"name": "op1", "inputs": ["conv"], "outputs": ["y"]},
        ],
    }
    graph_path = os.path.join(work, "traced.json")
    with open(graph_path, "w") as f:
        json.dump(graph, f)
    html = os.path.join(work, "traced.html")
    run_tool(tool, "report", graph_path, "--planner=naive", "--html=" + html)
    browser.open(html)
    check(browser.wait_ready(30) is not None, "source: never ran")
    tip = hover_check(browser, 0, 1, "conv", "source")
    where = "layer1.0.conv1 at net.py:42"
    check(
        tip is not None and where in tip["text"],
        "source: the tooltip %r lacks %r" % (tip and tip["text"], where),
    )
    cells = browser.js(
        "return [...document.querySelectorAll('td.source')]"
        ".map(t => t.textContent);"
    )
    check(where in cells, "source: the peak table's sources %s" % cells)


def test_pools(browser, tool, data, work):
    """Two pools: a picture and a live curve each, every buffer in one."""
    graph_path = os.path.join(data, "models", "resnet18.json")
    plan_path = os.path.join(work, "pools.plan.json")
    html = os.path.join(work, "pools.html")
    flags = ["--pool=sram:4000000:64", "--pool=dram:0:64"]
    run_tool(
        tool,
        "plan",
        graph_path,
        "--planner=greedy_by_size",
        "--out=" + plan_path,
        *flags,
    )
    run_tool(tool, "report", graph_path, plan_path, "--html=" + html, *flags)
    plan = json.load(open(plan_path))
    per_pool = {}
    for buffer in plan["buffers"]:
        per_pool[buffer["pool"]] = per_pool.get(buffer["pool"], 0) + 1
    browser.open(html)
    check(browser.wait_ready(30) is not None, "pools: never ran")
    placements = browser.js(PLACEMENTS)
    drawn = {p["pool"]: p["drawn"] for p in placements}
    check(
        drawn == per_pool and len(per_pool) == 2,
        "pools: drew %s, the plan has %s" % (drawn, per_pool),
    )
    series = browser.js(
        "return [...document.querySelectorAll('canvas.live')]"
        ".map(c => c.dataset.series);"
    )
    check(series == ["all", "sram", "dram"], "pools: live curves %s" % series)


def test_injection(browser, tool, work):
    evil = '</script><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    graph = {
        "format": "memplan-graph-v1",
        "name": "evil<b>",
        "tensors": [
            {"name": "in", "size": 64, "kind": "input"},
            {"name": evil, "size": 4096},
            {"name": "out", "size": 64, "kind": "output"},
        ],
        "ops": [
            {
                "name": '<img src=y onerror="window.__pwned=3">',
                "inputs": ["in"],
                "outputs": [evil],
            },
            {"name": "use", "inputs": [evil], "outputs": ["out"]},
        ],
    }
    graph_path = os.path.join(work, "evil.json")
    with open(graph_path, "w") as f:
        json.dump(graph, f)
    html = os.path.join(work, "evil.html")
    run_tool(tool, "report", graph_path, "--planner=naive", "--html=" + html)
    browser.open(html)
    check(browser.wait_ready(30) is not None, "injection: the report never ran")
    pwned = browser.js(
        "return window.__pwned === undefined ? null : " "window.__pwned;"
    )
    check(pwned is None, "injection: a name ran script (%s)" % pwned)
    images = browser.js("return document.images.length;")
    check(images == 0, "injection: %d <img> elements made from names" % images)
    hover_check(browser, 0, 1, evil, "injection")


def test_compressed_time(browser, tool, work):
    """Lifetimes near 2^61 steps: the page shows real steps, drawn by rows."""
    far = 2305843009213693951
    csv = os.path.join(work, "far.csv")
    with open(csv, "w") as f:
        f.write(
            "id,lower,upper,size\n0,0,%d,16\n1,5,%d,32\n2,100,100000000,8\n"
            % (far, far - 951)
        )
    html = os.path.join(work, "far.html")
    run_tool(tool, "report", csv, "--planner=naive", "--html=" + html)
    browser.open(html)
    check(
        browser.wait_ready(30) is not None, "compressed: the report never ran"
    )
    summary = browser.js(
        "return document.getElementById('summary').textContent;"
    )
    check(
        "3 buffers over %d steps" % far in summary
        and "time compressed to the 5 steps" in summary,
        "compressed: summary %r" % summary,
    )


def test_s1(browser, tool, data, work):
    csv = os.path.join(data, "traces", "S_1.csv")
    plan_path = os.path.join(work, "S_1.plan.json")
    html = os.path.join(work, "S_1.html")
    run_tool(
        tool, "plan", csv, "--planner=greedy_by_size", "--out=" + plan_path
    )
    run_tool(tool, "report", csv, plan_path, "--html=" + html)
    plan = json.load(open(plan_path))
    n = len(plan["buffers"])
    start = time.time()
    browser.open(html)
    took = browser.wait_ready(60)
    took = None if took is None else time.time() - start
    check(took is not None, "S_1: the report did not render within 60 s")
    if took is None:
        return
    print("S_1: %d buffers loaded and drawn in %.2f s" % (n, took))
    p = browser.js(PLACEMENTS)[0]
    check(
        p["buffers"] == n == 28526 and p["drawn"] == n and p["aggregated"] == 0,
        "S_1: drew %s, expected one rectangle per buffer (%d)" % (p, n),
    )
    shown = browser.js(
        "const s = document.querySelector('section.plan');"
        "return [s.dataset.peak, s.dataset.lowerBound];"
    )
    check(
        shown == [str(plan["peak"]), str(plan["lower_bound"])],
        "S_1: peak and bound shown %s, plan %d %d"
        % (shown, plan["peak"], plan["lower_bound"]),
    )

    # At this zoom a step is a few hundredths of a pixel: the buffer of the
    # largest area is one the mouse can single out.
    def area(b):
        buffer = plan["buffers"][b]
        return (buffer["size"] * (buffer["end"] - buffer["start"]), -b)

    largest = max(range(n), key=area)
    hover_check(
        browser, 0, largest, plan["buffers"][largest]["tensors"][0], "S_1"
    )
    colours, covered = colour_stats(browser.screenshot("canvas.placement"))
    check(
        colours >= 8 and covered > 0.05,
        "S_1: the screenshot looks blank (%d colours)" % colours,
    )


def test_aggregation(browser, tool, work):
    """60000 buffers in one pool: those under a pixel go to the grid."""
    rng = random.Random(7)
    path = os.path.join(work, "many.csv")
    plan_path = os.path.join(work, "many_plan.csv")
    offset = 0
    rows = []
    for i in range(60000):
        start = rng.randrange(0, 2000)
        size = rng.randrange(1, 200)
        rows.append((i, start, start + rng.randrange(1, 30), size, offset))
        offset += size
    # One large buffer, drawn on its own.
    rows.append((60000, 0, 2000, offset, offset))
    # The input is a buffer list; the plan is the same list with offsets.
    with open(path, "w") as f:
        f.write("id,lower,upper,size\n")
        f.writelines("%d,%d,%d,%d\n" % row[:4] for row in rows)
    with open(plan_path, "w") as f:
        f.write("id,lower,upper,size,offset\n")
        f.writelines("%d,%d,%d,%d,%d\n" % row for row in rows)
    html = os.path.join(work, "many.html")
    run_tool(tool, "report", path, plan_path, "--html=" + html)
    browser.open(html)
    check(
        browser.wait_ready(60) is not None,
        "aggregation: the report did not render within 60 s",
    )
    p = browser.js(PLACEMENTS)[0]
    check(
        p["buffers"] == 60001
        and p["drawn"] + p["aggregated"] + p["culled"] == 60001
        and p["aggregated"] > 50000
        and p["drawn"] >= 1,
        "aggregation: drew %s" % p,
    )
    hover_check(browser, 0, 60000, "60000", "aggregation")


def main():
    parser = argparse.ArgumentParser()
    for flag in ("tool", "data", "chromium", "chromedriver", "work"):
        parser.add_argument("--" + flag, required=True)
    parser.add_argument("--screenshots", default=None)
    args = parser.parse_args()
    shots = args.screenshots
    for name in ("chromium", "chromedriver"):
        path = getattr(args, name)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            print(
                "FAIL: %s not found (%r): install the Debian packages "
                "chromium and chromium-driver (scripts/install_deps.sh)"
                % (name, path)
            )
            return 1
    os.makedirs(args.work, exist_ok=True)
    browser = Browser(args.chromium, args.chromedriver, args.work)
    try:
        for name, test in [
            (
                "resnet50",
                lambda: test_resnet50(browser, args.tool, args.data, args.work),
            ),
            (
                "side by side",
                lambda: test_side_by_side(
                    browser, args.tool, args.data, args.work, shots
                ),
            ),
            (
                "labels",
                lambda: test_labels(browser, args.tool, args.data, args.work),
            ),
            (
                "symbolic",
                lambda: test_symbolic(
                    browser, args.tool, args.data, args.work, shots
                ),
            ),
            (
                "reordered",
                lambda: test_reordered(
                    browser, args.tool, args.data, args.work
                ),
            ),
            (
                "cannot fit",
                lambda: test_cannot_fit(
                    browser, args.tool, args.data, args.work, shots
                ),
            ),
            ("source", lambda: test_source(browser, args.tool, args.work)),
            (
                "pools",
                lambda: test_pools(browser, args.tool, args.data, args.work),
            ),
            (
                "injection",
                lambda: test_injection(browser, args.tool, args.work),
            ),
            (
                "compressed time",
                lambda: test_compressed_time(browser, args.tool, args.work),
            ),
            ("S_1", lambda: test_s1(browser, args.tool, args.data, args.work)),
            (
                "aggregation",
                lambda: test_aggregation(browser, args.tool, args.work),
            ),
        ]:
            print("--- " + name, flush=True)
            start = time.time()
            try:
                test()
                print("    %.1f s" % (time.time() - start), flush=True)
            except Exception as error:  # one broken case, the others still run
                check(False, "%s: %s" % (name, error))
    finally:
        browser.close()
    if FAILURES:
        print("%d failures" % len(FAILURES))
        return 1
    print("all browser checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
