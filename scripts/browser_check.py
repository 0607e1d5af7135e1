#!/usr/bin/python3
"""Renders a self-contained HTML page in headless Chromium and checks it, with the standard library only.

    render(html_path, out_dir) -> {"dom", "errors", "screenshot", "nonblank", ...}

runs Debian's `chromium` twice under a timeout: once with --dump-dom on a copy of the page that has a
probe <script> injected first in <head> (it records window.onerror, unhandled promise rejections and
console.error calls as JSON in the data-console-errors attribute of <html>, read back from the dumped
DOM), and once with --screenshot on the page itself. Uncaught exceptions that Chromium logs on stderr
(`--enable-logging=stderr`: `CONSOLE... "Uncaught ..."`) are collected too; Chromium logs every console
message at INFO there, so console.error itself is only seen through the probe.

Also: a PNG decoder (8-bit gray/RGB/RGBA with or without alpha, non-interlaced, all five filters), a DOM
built with html.parser, json_path() and check_numbers() for the report page contract (each shown number
is an element with data-json="PATH" data-value="V" [data-scale="S"] whose text starts with V*S rounded).

CLI: browser_check.py PAGE.html [--out DIR] [--width W] [--height H] [--json DOC.json]
prints the render result (and the number mismatches against DOC.json) and exits 1 on any problem.
"""
import argparse
import collections
import concurrent.futures
import html.parser
import json
import math
import os
import pathlib
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from decimal import Decimal

CHROMIUM = os.environ.get("TESSERA_CHROMIUM", "/usr/bin/chromium")
TIMEOUT_S = 60
VIRTUAL_TIME_BUDGET_MS = 2000
# render(height=None): the page's own height (measured by the probe), within these bounds.
MIN_HEIGHT, MAX_HEIGHT = 200, 8000

# Injected as the first script of the page copy that is dumped. It must run before any page script,
# survive a page that replaces console.error, and keep working if JSON or the attribute API is odd.
PROBE_SCRIPT = """<script data-browser-check-probe>
(function () {
  var root = document.documentElement, errors = [];
  function text(value) {
    try {
      if (value instanceof Error) return value.name + ": " + value.message;
      if (typeof value === "object") return JSON.stringify(value);
      return String(value);
    } catch (e) { return String(value); }
  }
  function record(kind, message) {
    errors.push(kind + ": " + message);
    try { root.setAttribute("data-console-errors", JSON.stringify(errors)); } catch (e) {}
  }
  window.addEventListener("error", function (event) {
    if (event.target && event.target !== window && event.target.tagName) {
      record("resource", "failed to load <" + event.target.tagName.toLowerCase() + ">");
      return;
    }
    var where = event.filename ? " (" + event.filename + ":" + event.lineno + ")" : "";
    record("uncaught", (event.error ? text(event.error) : event.message) + where);
  }, true);
  window.addEventListener("unhandledrejection", function (event) {
    record("unhandledrejection", text(event.reason));
  });
  var original = console.error;
  console.error = function () {
    record("console.error", Array.prototype.map.call(arguments, text).join(" "));
    return original.apply(console, arguments);
  };
  function measure() {
    var body = document.body, height = Math.max(root.scrollHeight, body ? body.scrollHeight : 0);
    root.setAttribute("data-page-height", String(Math.ceil(height)));
  }
  root.setAttribute("data-console-errors", "[]");
  window.addEventListener("load", function () { measure(); setTimeout(measure, 0); });
})();
</script>
"""

CONSOLE_LINE = re.compile(r":CONSOLE[:(](\d+)\)?\] \"(.*)\", source: (.*)$")


class BrowserError(RuntimeError):
    """Chromium is missing, crashed, or ran past its timeout."""


# ---------------------------------------------------------------------------------------------- chromium

def chromium_version(binary=None):
    binary = binary or CHROMIUM
    out = _run([binary, "--version"], timeout=TIMEOUT_S)
    return out[1].strip()


def _run(cmd, timeout):
    """Runs cmd in its own process group; on timeout kills the whole group. Returns (rc, stdout, stderr)."""
    if not os.path.exists(cmd[0]):
        raise BrowserError(f"{cmd[0]} not found: install Debian's chromium (scripts/install-deps.sh)")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            start_new_session=True, text=True, errors="replace")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        raise BrowserError(f"{cmd[0]} ran past {timeout} s: {' '.join(cmd[1:])}") from None
    finally:
        # Chromium's helpers (zygote, GPU, utility processes) share the group; leave none behind.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return proc.returncode, out, err


def _chromium(url, extra, timeout, binary):
    profile = tempfile.mkdtemp(prefix="browser-check-profile-")
    try:
        cmd = [binary or CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--hide-scrollbars", f"--user-data-dir={profile}", "--no-first-run", "--no-default-browser-check",
               "--disable-extensions", "--disable-background-networking", "--disable-sync",
               "--enable-logging=stderr", "--v=0", f"--virtual-time-budget={VIRTUAL_TIME_BUDGET_MS}",
               *extra, url]
        return _run(cmd, timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def inject_probe(page_html):
    """The page with PROBE_SCRIPT as the first thing in <head> (a <head> is created if there is none)."""
    head = re.search(r"<head(\s[^>]*)?>", page_html, re.I)
    if head:
        return page_html[:head.end()] + PROBE_SCRIPT + page_html[head.end():]
    root = re.search(r"<html(\s[^>]*)?>", page_html, re.I)
    if root:
        return page_html[:root.end()] + "<head>" + PROBE_SCRIPT + "</head>" + page_html[root.end():]
    doctype = re.match(r"\s*<!doctype[^>]*>", page_html, re.I)
    at = doctype.end() if doctype else 0
    return page_html[:at] + "<head>" + PROBE_SCRIPT + "</head>" + page_html[at:]


def console_errors_from_stderr(stderr):
    """Uncaught exceptions / rejections that Chromium logged as CONSOLE lines (every level logs as INFO, so
    console.error is indistinguishable from console.log there): [(message without "Uncaught ", source)]."""
    found = []
    for line in stderr.splitlines():
        match = CONSOLE_LINE.search(line)
        if match:
            uncaught = re.match(r"Uncaught (?:\(in promise\) )?(.*)", match.group(2))
            if uncaught:
                found.append((uncaught.group(1), match.group(3)))
    return found


def render(html_path, out_dir, width=1280, height=None, timeout=TIMEOUT_S, binary=None, max_height=MAX_HEIGHT):
    """Renders html_path; writes <stem>.png (and the probed copy) into out_dir.

    height None: the page's height as the probe measured it (within MIN_HEIGHT..max_height).
    Returns dict(dom, document, errors, screenshot, nonblank, pixels, page_height, width, height,
    elapsed_s, stderr). errors lists the page's console errors and anything that went wrong rendering."""
    start = time.monotonic()
    html_path = pathlib.Path(html_path).resolve()
    out_dir = pathlib.Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    errors = []
    page = html_path.read_text(encoding="utf-8", errors="replace")
    # The copy must sit next to the page so relative references (which a report must not have) resolve alike.
    probe_path = out_dir / f"{html_path.stem}.probe.html"
    probe_path.write_text(inject_probe(page), encoding="utf-8")

    screenshot = out_dir / f"{html_path.stem}.png"
    if screenshot.exists():
        screenshot.unlink()

    def dump(window_height):
        return _chromium(probe_path.as_uri(), ["--dump-dom", f"--window-size={width},{window_height}"], timeout, binary)

    def shoot(window_height):
        return _chromium(html_path.as_uri(), [f"--screenshot={screenshot}", f"--window-size={width},{window_height}"],
                         timeout, binary)

    if height is None:
        # The page's height is known only after the dump, which runs in a short window so the measured
        # height is the content's, not the viewport's.
        rc, dom, err_dump = dump(MIN_HEIGHT)
        shot = None
    else:
        # Both runs at once: they are independent when the height is given.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            shot = pool.submit(shoot, height)
            rc, dom, err_dump = dump(height)
            shot = shot.result()
    if rc != 0:
        errors.append(f"chromium --dump-dom exited {rc}: {err_dump.strip()[-2000:]}")
    if "<html" not in dom.lower():
        errors.append("chromium --dump-dom printed no document")
    document = parse_dom(dom)
    root = document.find("html")
    recorded = root.attrs.get("data-console-errors") if root else None
    if recorded is None:
        errors.append("the console-error probe did not run (no data-console-errors on <html>)")
    else:
        try:
            errors.extend(json.loads(recorded))
        except ValueError:
            errors.append(f"unreadable data-console-errors: {recorded!r}")
    page_height = None
    if root is not None and root.attrs.get("data-page-height", "").isdigit():
        page_height = int(root.attrs["data-page-height"])
    if height is None:
        height = min(max(page_height or 1600, MIN_HEIGHT), max_height)
        shot = shoot(height)
    rc, _, err_shot = shot
    if rc != 0:
        errors.append(f"chromium --screenshot exited {rc}: {err_shot.strip()[-2000:]}")
    # The probed run's stderr holds the same uncaught errors the probe saw; the plain run's are new evidence.
    seen = " ".join(errors)
    for message, source in console_errors_from_stderr(err_dump + err_shot):
        if message not in seen:
            errors.append(f"stderr: Uncaught {message} ({source})")
            seen += " " + message

    pixels = None
    nonblank = False
    if not screenshot.exists():
        errors.append("chromium wrote no screenshot")
    else:
        try:
            pixels = pixel_stats(decode_png(screenshot.read_bytes()))
            nonblank = is_nonblank(pixels)
        except ValueError as e:
            errors.append(f"screenshot: {e}")
    return {"dom": dom, "document": document, "errors": errors, "screenshot": str(screenshot),
            "nonblank": nonblank, "pixels": pixels, "page_height": page_height, "width": width, "height": height,
            "elapsed_s": time.monotonic() - start, "stderr": err_dump + err_shot}


# --------------------------------------------------------------------------------------------------- PNG

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type -> samples per pixel (8-bit only)


class Image:
    def __init__(self, width, height, channels, data):
        self.width, self.height, self.channels, self.data = width, height, channels, data

    def pixel(self, x, y):
        at = (y * self.width + x) * self.channels
        return tuple(self.data[at:at + self.channels])

    def rgba(self):
        """Every pixel as an RGBA int (0xRRGGBBAA), row-major."""
        d, n = self.data, self.width * self.height
        if self.channels == 4:
            return [int.from_bytes(d[i:i + 4], "big") for i in range(0, 4 * n, 4)] if n < 4096 else \
                list(memoryview(_swap32(d)).cast("I"))
        if self.channels == 3:
            return [(r << 24) | (g << 16) | (b << 8) | 255 for r, g, b in zip(d[0::3], d[1::3], d[2::3])]
        if self.channels == 2:
            return [(v << 24) | (v << 16) | (v << 8) | a for v, a in zip(d[0::2], d[1::2])]
        return [(v << 24) | (v << 16) | (v << 8) | 255 for v in d]


def _swap32(data):
    """RGBA bytes reordered so a native-endian uint32 view reads 0xRRGGBBAA."""
    if sys.byteorder == "big":
        return bytes(data)
    out = bytearray(len(data))
    out[0::4], out[1::4], out[2::4], out[3::4] = data[3::4], data[2::4], data[1::4], data[0::4]
    return bytes(out)


def _paeth_row(line, prev, bpp):
    out = bytearray(line)
    for i in range(len(out)):
        a = out[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        if pa <= pb and pa <= pc:
            out[i] = (out[i] + a) & 255
        elif pb <= pc:
            out[i] = (out[i] + b) & 255
        else:
            out[i] = (out[i] + c) & 255
    return out


def _sub_row(line, bpp):
    out = bytearray(line)
    for i in range(bpp, len(out)):
        out[i] = (out[i] + out[i - bpp]) & 255
    return out


def _up_row(line, prev):
    if not any(line):
        return bytearray(prev)
    return bytearray((x + y) & 255 for x, y in zip(line, prev))


def _average_row(line, prev, bpp):
    out = bytearray(line)
    for i in range(len(out)):
        a = out[i - bpp] if i >= bpp else 0
        out[i] = (out[i] + ((a + prev[i]) >> 1)) & 255
    return out


def decode_png(data):
    """Decodes an 8-bit, non-interlaced gray / gray+alpha / RGB / RGBA PNG into an Image."""
    if data[:8] != PNG_SIGNATURE:
        raise ValueError("not a PNG (bad signature)")
    pos, idat, header = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = data[pos + 8 + length:pos + 12 + length]
        if len(body) != length or len(crc) != 4:
            raise ValueError(f"truncated {kind!r} chunk")
        if struct.unpack(">I", crc)[0] != zlib.crc32(kind + body) & 0xFFFFFFFF:
            raise ValueError(f"bad CRC in {kind!r} chunk")
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("no IHDR chunk")
    width, height, depth, colour, compression, filtering, interlace = header
    if depth != 8 or colour not in CHANNELS:
        raise ValueError(f"unsupported PNG: bit depth {depth}, colour type {colour} (need 8-bit gray/RGB/RGBA)")
    if compression != 0 or filtering != 0 or interlace != 0:
        raise ValueError(f"unsupported PNG: compression {compression}, filter method {filtering}, "
                         f"interlace {interlace}")
    raw = zlib.decompress(b"".join(idat))
    bpp = CHANNELS[colour]
    stride = width * bpp
    if len(raw) < height * (stride + 1):
        raise ValueError(f"image data too short: {len(raw)} bytes for {width}x{height}")
    out = bytearray(height * stride)
    prev = bytearray(stride)
    for y in range(height):
        at = y * (stride + 1)
        kind, line = raw[at], raw[at + 1:at + 1 + stride]
        if kind == 0:
            row = bytearray(line)
        elif kind == 1:
            row = _sub_row(line, bpp)
        elif kind == 2:
            row = _up_row(line, prev)
        elif kind == 3:
            row = _average_row(line, prev, bpp)
        elif kind == 4:
            row = _paeth_row(line, prev, bpp)
        else:
            raise ValueError(f"row {y}: unknown filter type {kind}")
        out[y * stride:(y + 1) * stride] = row
        prev = row
    return Image(width, height, bpp, bytes(out))


def encode_png(width, height, channels, data, filters=(0,)):
    """A PNG of raw 8-bit pixel rows, row y filtered with filters[y % len(filters)] (for tests and fixtures)."""
    colour = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    stride = width * channels
    raw = bytearray()
    prev = bytes(stride)
    for y in range(height):
        row = data[y * stride:(y + 1) * stride]
        kind = filters[y % len(filters)]
        out = bytearray(stride)
        for i in range(stride):
            a = row[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if kind == 0:
                predictor = 0
            elif kind == 1:
                predictor = a
            elif kind == 2:
                predictor = b
            elif kind == 3:
                predictor = (a + b) >> 1
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            out[i] = (row[i] - predictor) & 255
        raw += bytes([kind]) + out
        prev = row

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    return (PNG_SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b""))


def pixel_stats(image):
    counts = collections.Counter(image.rgba())
    total = image.width * image.height
    top, top_n = counts.most_common(1)[0] if counts else (0, 0)
    return {"width": image.width, "height": image.height, "pixels": total, "distinct_colours": len(counts),
            "most_common": f"#{top:08x}", "other_share": (total - top_n) / total if total else 0.0}


def is_nonblank(stats, min_share=0.01, min_colours=16):
    """More than min_share of the pixels differ from the most common colour, in more than min_colours colours."""
    return stats["other_share"] > min_share and stats["distinct_colours"] > min_colours


# --------------------------------------------------------------------------------------------------- DOM

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track",
        "wbr"}


class Element:
    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent, self.children = tag, attrs, parent, []

    def iter(self):
        for child in self.children:
            if isinstance(child, Element):
                yield child
                yield from child.iter()

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def find_all(self, tag=None, **attrs):
        """Descendants with this tag (None: any) whose attributes match: name=value, name=True (present).
        Attribute names use _ for -: data_chart="timeline" matches data-chart="timeline"."""
        wanted = {k.replace("_", "-"): v for k, v in attrs.items()}
        found = []
        for e in self.iter():
            if tag is not None and e.tag != tag:
                continue
            if all((k in e.attrs) if v is True else e.attrs.get(k) == v for k, v in wanted.items()):
                found.append(e)
        return found

    def find(self, tag=None, **attrs):
        found = self.find_all(tag, **attrs)
        return found[0] if found else None

    def has_class(self, name):
        return name in self.attrs.get("class", "").split()

    def __repr__(self):
        attrs = "".join(f' {k}="{v}"' for k, v in self.attrs.items())
        return f"<{self.tag}{attrs}>"


class _TreeBuilder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        e = Element(tag, {k: ("" if v is None else v) for k, v in attrs}, self.stack[-1])
        self.stack[-1].children.append(e)
        if tag not in VOID:
            self.stack.append(e)

    def handle_startendtag(self, tag, attrs):
        e = Element(tag, {k: ("" if v is None else v) for k, v in attrs}, self.stack[-1])
        self.stack[-1].children.append(e)

    def handle_endtag(self, tag):
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse_dom(text):
    """The document as an Element tree (root tag "#document")."""
    builder = _TreeBuilder()
    builder.feed(text)
    builder.close()
    return builder.root


# ---------------------------------------------------------------------------------------- the page contract

URL_PATTERNS = [r"http://", r"https://", r"src\s*=", r"href\s*=\s*(?![\"']?#)", r"@import", r"url\("]


def find_urls(page_html):
    """Every place the page references something outside itself (the contract forbids them all)."""
    found = []
    for pattern in URL_PATTERNS:
        for m in re.finditer(pattern, page_html, re.I):
            found.append(f"{m.group(0)!r} at {m.start()}: {page_html[max(0, m.start() - 40):m.end() + 40]!r}")
    return found


PATH_TOKEN = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")


def json_path(doc, path):
    """doc at path: dot-separated keys, [i] for array indices ("plans[0].estimate.breakdown.compute_s")."""
    node, pos = doc, 0
    while pos < len(path):
        m = PATH_TOKEN.match(path, pos)
        if not m or (pos == 0 and path.startswith(".")):
            raise KeyError(f"bad JSON path {path!r} at {pos}")
        key, index = m.group(1), m.group(2)
        if index is not None:
            if not isinstance(node, list) or int(index) >= len(node):
                raise KeyError(f"{path!r}: no index [{index}] at {path[:pos]!r}")
            node = node[int(index)]
        else:
            if not isinstance(node, dict) or key not in node:
                raise KeyError(f"{path!r}: no key {key!r} at {path[:pos] or '(root)'!r}")
            node = node[key]
        pos = m.end()
    return node


SHOWN_NUMBER = re.compile(r"\s*([-+\u2212]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:[eE]([-+]?\d+))?")


def shown_number(text):
    """(value as Decimal, half a unit of its last shown digit) of the number text starts with, or None."""
    m = SHOWN_NUMBER.match(text)
    if not m:
        return None
    sign, whole, decimals, exponent = m.groups()
    digits = whole.replace(",", "") + ("." + decimals if decimals else "")
    value = Decimal(digits) * Decimal(10) ** int(exponent or 0)
    if sign in ("-", "\u2212"):
        value = -value
    half_unit = Decimal(5) * Decimal(10) ** (int(exponent or 0) - len(decimals or "") - 1)
    return value, half_unit


class NumberCheck(list):
    """The mismatches (a list of strings); .checked counts the data-json elements looked at."""
    checked = 0


def check_numbers(dom, json_doc, volatile=()):
    """Every element with data-json="PATH" data-value="V" [data-scale="S"] in dom (HTML text or parse_dom's
    tree): V equals json_doc at PATH (1e-12 relative), and the element's text starts with V*S rounded to the
    decimals it shows (within half a unit of the last shown digit). Returns a NumberCheck of mismatches.

    volatile: final keys of figures that differ from run to run (a search's wall time): for those PATH must
    exist and hold a number, and the text must show V*S, but V need not equal another run's value."""
    document = parse_dom(dom) if isinstance(dom, str) else dom
    result = NumberCheck()
    for e in document.find_all(data_json=True):
        result.checked += 1
        path = e.attrs["data-json"]
        where = f"{e!r} text {e.text().strip()[:60]!r}"
        try:
            expected = json_path(json_doc, path)
        except KeyError as err:
            result.append(f"{where}: {err.args[0]}")
            continue
        if isinstance(expected, bool) or not isinstance(expected, (int, float)):
            result.append(f"{where}: {path} is {expected!r}, not a number")
            continue
        try:
            value = float(e.attrs.get("data-value", ""))
            scale = float(e.attrs.get("data-scale", "1") or "1")
        except ValueError:
            result.append(f"{where}: data-value / data-scale is not a number")
            continue
        if not (math.isfinite(value) and math.isfinite(scale)):
            result.append(f"{where}: data-value / data-scale is not finite")
            continue
        last_key = re.sub(r"\[\d+\]$", "", path).rsplit(".", 1)[-1]
        if last_key not in volatile and abs(value - expected) > 1e-12 * abs(expected) and value != expected:
            result.append(f"{where}: data-value {value!r} != {path} = {expected!r}")
            continue
        shown = shown_number(e.text())
        if shown is None:
            result.append(f"{where}: the text does not start with a number")
            continue
        number, half_unit = shown
        target = Decimal(value) * Decimal(scale)
        # Slack for the binary's own float product V*S and ties rounded either way.
        slack = half_unit + abs(target) * Decimal("1e-12")
        if abs(number - target) > slack:
            result.append(f"{where}: shows {number} but {path} = {value!r} x {scale!r} = {float(target)!r} "
                          f"(off by more than {half_unit})")
    return result


# --------------------------------------------------------------------------------------------------- CLI

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page")
    parser.add_argument("--out", default=None, help="where the screenshot goes (default: a temporary folder)")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=None, help="default: the page's height")
    parser.add_argument("--json", default=None, help="the --json document to check the page's numbers against")
    args = parser.parse_args(argv)
    out = args.out or tempfile.mkdtemp(prefix="browser-check-")
    result = render(args.page, out, width=args.width, height=args.height)
    problems = list(result["errors"])
    if not result["nonblank"]:
        problems.append(f"blank screenshot: {result['pixels']}")
    problems += [f"URL: {u}" for u in find_urls(pathlib.Path(args.page).read_text(encoding="utf-8"))]
    report = {k: result[k] for k in ("screenshot", "nonblank", "pixels", "page_height", "width", "height", "errors")}
    report["elapsed_s"] = round(result["elapsed_s"], 2)
    if args.json:
        mismatches = check_numbers(result["document"], json.loads(pathlib.Path(args.json).read_text()))
        report["numbers_checked"], report["number_mismatches"] = mismatches.checked, list(mismatches)
        problems += mismatches
    print(json.dumps(report, indent=2))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
