#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Open a gpuctx HTML page in headless Chromium as a person would, and check what it shows.

Usage: check_page.py CHROMIUM PAGE.html REPORT.json SHOT.png [--max-load-ms MS] [--hostile]

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: fds 3 and 4,
NUL-separated JSON), with no package beyond Python's own. It loads the page, then checks:
- nothing was fetched but the page itself, and nothing was logged as an error or warning
  (a Content-Security-Policy violation, a refused style, a script error);
- the page's own style applied (its hash matched the policy): the verdict's border is coloured;
- each host's verdict is the one `gpuctx report --json` gives, and with several hosts their
  sections sit side by side;
- the tree highlights each incident's source and its first members, the timeline has one group
  of marks per incident, and both pictures have a size on screen;
- the screenshot (the whole page) is not blank: a PNG decoded here (zlib), counted for pixels
  that are not white, and for the incident's red;
- with --hostile: no element or attribute of the trace's strings made it into the DOM (no
  img, script, a, event handler, URL attribute; b, i and svg only as the page makes them), no bidi
  control in its text, and the strings are shown as text.
It prints one line of numbers (load time, size) and exits 1 with the reasons on failure.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import zlib

TIMEOUT = 30.0


class Chrome:
    def __init__(self, binary, profile):
        r_in, w_in = os.pipe()  # we write, Chromium reads on fd 3
        r_out, w_out = os.pipe()  # Chromium writes on fd 4, we read
        args = [binary, "--headless", "--remote-debugging-pipe", "--no-sandbox",
                "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking",
                "--disable-sync", "--disable-component-update", "--hide-scrollbars",
                "--user-data-dir=" + profile, "about:blank"]

        def fds():  # in the child: the pipe's ends at 3 and 4, kept across exec
            a, b = os.dup(r_in), os.dup(w_out)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.p = subprocess.Popen(args, preexec_fn=fds, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, close_fds=False)
        os.close(r_in)
        os.close(w_out)
        self.w = os.fdopen(w_in, "wb", buffering=0)
        self.r = os.fdopen(r_out, "rb", buffering=0)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.p.wait(5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()

    def _read(self, deadline):
        while b"\0" not in self.buf:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from Chromium")
            chunk = self.r.read(1 << 16)
            if not chunk:
                raise EOFError("Chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        self.w.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            m = self._read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method):
        deadline = time.monotonic() + TIMEOUT
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._read(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)


def png_pixels(data):
    """(width, height, rows of RGB(A) bytes) of an 8-bit, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace, "PNG kind"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[x] = (line[x] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


DOM_JS = r"""
(() => {
  const q = s => [...document.querySelectorAll(s)];
  const box = e => { const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; };
  return {
    title: document.title,
    hosts: q('section.host').map(s => ({
      box: box(s),
      name: (s.querySelector('h2.hostname') || {}).textContent,
      verdict: (s.querySelector('section.verdict') || {}).textContent,
      verdictBorder: s.querySelector('section.verdict') ?
        getComputedStyle(s.querySelector('section.verdict')).borderLeftColor : '',
      incidents: q('#' + s.id + ' article.incident').map(a => a.dataset.incident),
      incPids: q('#' + s.id + ' svg.tree g.proc.inc').map(g => +g.dataset.pid),
      treeRows: q('#' + s.id + ' svg.tree g.proc').length,
      tree: s.querySelector('svg.tree') ? box(s.querySelector('svg.tree')) : null,
      timeline: s.querySelector('svg.timeline') ? box(s.querySelector('svg.timeline')) : null,
      marks: q('#' + s.id + ' svg.timeline:not(.zoom) g.mark').map(g => g.dataset.incident),
      markLines: q('#' + s.id + ' svg.timeline line.mark').length,
      finds: q('#' + s.id + ' svg.timeline .find').length,
      stacks: q('#' + s.id + ' details.stack').length,
    })),
    scripts: q('script').length,
    height: document.documentElement.scrollHeight,
    width: document.documentElement.scrollWidth,
  };
})()
"""


HOSTILE_JS = r"""
(() => {
  const bad = [];
  for (const e of document.querySelectorAll('*')) {
    const t = e.tagName.toLowerCase();
    for (const a of e.getAttributeNames())
      if (a.startsWith('on') || (/^(href|src|xlink:href|action|formaction)$/).test(a))
        bad.push(t + ' ' + a);
    if (['img', 'script', 'iframe', 'object', 'embed', 'a', 'form', 'foreignobject',
         'image', 'use', 'link', 'base'].includes(t))
      bad.push(t);
    if ((t === 'b' || t === 'i') && (e.children.length ||
        e.getAttributeNames().some(a => a !== 'class'))) bad.push(t);
    if (t === 'i' && !(e.className || '').startsWith('sw')) bad.push('i');
    if (t === 'b' && e.className) bad.push('b');
    if (t === 'svg' && !/^(tree|timeline)/.test(e.getAttribute('class') || '')) bad.push('svg');
  }
  const text = document.body.textContent;
  return {bad: bad.slice(0, 20), bidi: /[\u202a-\u202e\u2066-\u2069]/.test(text),
          shown: ['alert(2)', 'javascript:alert(3)', 'onerror=alert(1)'].filter(
            s => text.includes(s))};
})()
"""


def host_reports(report):
    if "hosts" in report:
        return [(h["host"], h["report"]) for h in report["hosts"]]
    return [(None, report)]


def main():
    args = sys.argv[1:]
    if len(args) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    binary, page, report_path, shot = args[:4]
    max_load_ms = 3000
    if "--max-load-ms" in args:
        max_load_ms = float(args[args.index("--max-load-ms") + 1])
    report = json.load(open(report_path))
    errs = []
    url = "file://" + os.path.abspath(page)
    with tempfile.TemporaryDirectory(prefix="gpuctx-chromium.") as profile:
        c = Chrome(binary, profile)
        try:
            target = c.send("Target.createTarget", {"url": "about:blank"}, session=False)
            c.session = c.send("Target.attachToTarget",
                               {"targetId": target["targetId"], "flatten": True},
                               session=False)["sessionId"]
            for d in ("Page", "Network", "Log", "Runtime"):
                c.send(d + ".enable")
            c.send("Emulation.setDeviceMetricsOverride",
                   {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
            c.events.clear()
            t0 = time.monotonic()
            c.send("Page.navigate", {"url": url})
            c.wait_event("Page.loadEventFired")
            load_ms = (time.monotonic() - t0) * 1000
            dom = c.send("Runtime.evaluate", {"expression": DOM_JS, "returnByValue": True})
            dom = dom["result"]["value"]
            hostile = None
            if "--hostile" in args:
                hostile = c.send("Runtime.evaluate", {"expression": HOSTILE_JS,
                                                      "returnByValue": True})
                hostile = hostile["result"]["value"]
            png = c.send("Page.captureScreenshot",
                         {"format": "png", "captureBeyondViewport": True})
            time.sleep(0.2)  # late log entries
            c.send("Runtime.evaluate", {"expression": "1"})
        finally:
            c.close()
    data = __import__("base64").b64decode(png["data"])
    with open(shot, "wb") as f:
        f.write(data)

    # nothing fetched but the page, nothing logged
    for m in c.events:
        meth, p = m.get("method"), m.get("params", {})
        if meth == "Network.requestWillBeSent" and p["request"]["url"] != url:
            errs.append("request for %s" % p["request"]["url"][:200])
        elif meth == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
            errs.append("log %s: %s" % (p["entry"]["level"], p["entry"]["text"][:300]))
        elif meth == "Runtime.consoleAPICalled":
            errs.append("console %s" % p.get("type"))
        elif meth == "Runtime.exceptionThrown":
            errs.append("exception: %s" % p["exceptionDetails"].get("text"))
    if hostile is not None:
        if hostile["bad"]:
            errs.append("elements or attributes from the trace: %s" % hostile["bad"])
        if hostile["bidi"]:
            errs.append("a bidi control reached the page's text")
        if len(hostile["shown"]) != 3:
            errs.append("the hostile strings are not shown as text: %s" % hostile["shown"])
    if dom["scripts"]:
        errs.append("%d script elements" % dom["scripts"])
    if load_ms > max_load_ms:
        errs.append("load took %.0f ms (limit %.0f)" % (load_ms, max_load_ms))

    hosts = host_reports(report)
    if len(dom["hosts"]) != len(hosts):
        errs.append("%d host sections, want %d" % (len(dom["hosts"]), len(hosts)))
    for (name, rep), h in zip(hosts, dom["hosts"]):
        label = name or "host"
        want = rep["summary"]["verdict"]
        if not h["verdict"] or want not in h["verdict"]:
            errs.append("%s: verdict %r, want %r" % (label, h["verdict"], want))
        # the style applied: a verdict with incidents has a red or amber border, else green
        if h["verdictBorder"] in ("", "rgb(0, 0, 0)", "rgb(27, 27, 27)"):
            errs.append("%s: verdict has no colour (style refused?): %r" %
                        (label, h["verdictBorder"]))
        incs = rep["incidents"][:20]  # the page's first 20 in full, the rest a line each
        if [str(i["id"]) for i in incs] != h["incidents"]:
            errs.append("%s: incidents %s, want %s" %
                        (label, h["incidents"], [i["id"] for i in incs]))
        if sorted(set(h["marks"])) != sorted(str(i["id"]) for i in incs):
            errs.append("%s: timeline marks for incidents %s" % (label, h["marks"]))
        for i in incs:
            want_pids = {i["pid"]} | set(i["pids"][:40])
            missing = want_pids - set(h["incPids"])
            if missing:
                errs.append("%s: incident #%d processes not highlighted: %s" %
                            (label, i["id"], sorted(missing)[:10]))
        if any(any(i["where"].values()) for i in incs) and not h["stacks"]:
            errs.append("%s: code locations but no stack to unfold" % label)
        if incs and not h["markLines"]:
            errs.append("%s: no incident lines on the timeline" % label)
        for what in ("tree", "timeline"):
            if not h[what] or h[what][2] < 100 or h[what][3] < 20:
                errs.append("%s: %s not drawn: %s" % (label, what, h[what]))
        if h["treeRows"] > 400:
            errs.append("%s: %d rows in the tree: not folded" % (label, h["treeRows"]))
    if len(dom["hosts"]) > 1:
        ys = {round(h["box"][1]) for h in dom["hosts"]}
        xs = [h["box"][0] for h in dom["hosts"]]
        if len(ys) != 1 or len(set(xs)) != len(xs):
            errs.append("hosts not side by side: %s" % [h["box"] for h in dom["hosts"]])

    # the screenshot: not blank, the incident's red in it
    w, hgt, bpp, rows = png_pixels(data)
    ink = red = 0
    for line in rows:
        for x in range(0, w * bpp, bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if r < 235 or g < 235 or b < 235:
                ink += 1
            if r > 150 and g < 80 and b < 80:
                red += 1
    frac = ink / float(w * hgt)
    if frac < 0.02:
        errs.append("screenshot nearly blank: %.3f%% ink" % (100 * frac))
    if any(r["incidents"] for _, r in hosts) and red < 50:
        errs.append("screenshot has no incident red (%d pixels)" % red)

    print("page %s: %d bytes, loaded in %.0f ms, %dx%d px, %.1f%% ink, %d hosts, %s" %
          (os.path.basename(page), os.path.getsize(page), load_ms, w, hgt, 100 * frac,
           len(dom["hosts"]),
           ", ".join("%d rows/%d incidents" % (h["treeRows"], len(h["incidents"]))
                     for h in dom["hosts"])))
    for e in errs:
        print("FAIL: " + e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
