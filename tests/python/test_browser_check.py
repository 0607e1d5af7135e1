"""The headless-browser harness (scripts/browser_check.py) on small pages of its own: a clean page renders
without errors and is not blank, a page that throws (or calls console.error, or rejects a promise) reports
it, a white page is blank, the PNG decoder reads every filter type, and the number checker enforces the
report contract (data-json / data-value / data-scale and the shown rounding)."""
import concurrent.futures
import json
import pathlib
import random
import struct
import sys
import zlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import browser_check  # noqa: E402

CLEAN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fixture</title>
<style>body { font-family: sans-serif; margin: 24px; } table { border-collapse: collapse; }
td, th { border: 1px solid #999; padding: 4px 8px; }</style></head>
<body><main data-report="estimate">
<h1>Iteration <span data-json="iteration_time_s" data-value="4.8593962096998710" data-scale="1">4.86 s</span></h1>
<svg class="chart" data-chart="time-breakdown" width="640" height="240" viewBox="0 0 640 240">
  <rect x="10" y="10" width="420" height="60" fill="#4e79a7"/><rect x="10" y="90" width="160" height="60" fill="#f28e2b"/>
  <rect x="10" y="170" width="60" height="60" fill="#e15759"/><text x="450" y="45">compute</text>
</svg>
<figure data-chart="timeline"><canvas id="timeline" width="640" height="160"></canvas></figure>
<table class="sortable"><tr><th>stage</th><th>GiB</th></tr>
<tr><td>0</td><td data-json="peak_memory_gib" data-value="55.290283203125">55.29 GiB</td></tr></table>
<script>
  var g = document.getElementById("timeline").getContext("2d");
  for (var i = 0; i < 12; i++) { g.fillStyle = "hsl(" + i * 30 + ", 70%, 50%)"; g.fillRect(i * 52, 10, 44, 140); }
  document.querySelector("h1").setAttribute("data-drawn", "yes");
</script>
</main></body></html>
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def page_with_script(*scripts):
    return ("<!doctype html><html><head><title>t</title></head><body><main data-report=\"plan\">"
            "<p>some text</p></main>" + "".join(f"<script>{s}</script>" for s in scripts) + "</body></html>")


# Each failure in its own <script>, so one does not stop the next.
FAULTY_PAGE = page_with_script('throw new Error("deliberate failure");',
                               'console.log("fine"); console.error("bad thing", 42);',
                               'Promise.reject(new Error("nobody caught me"));',
                               "var x = ;",
                               'throw new TypeError("logged too");')
WHITE_PAGE = '<!doctype html><html><head></head><body style="background:#fff"></body></html>'


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """The clean, faulty and white pages rendered at once (each render is two Chromium runs of ~3 s)."""
    tmp = tmp_path_factory.mktemp("rendered")
    pages = {"clean": (CLEAN_PAGE, 600), "faulty": (FAULTY_PAGE, 400), "white": (WHITE_PAGE, 400)}
    with concurrent.futures.ThreadPoolExecutor(len(pages)) as pool:
        futures = {name: pool.submit(browser_check.render, write(tmp, f"{name}.html", text), tmp / name, height=h)
                   for name, (text, h) in pages.items()}
        return {name: future.result() for name, future in futures.items()}


# ------------------------------------------------------------------------------------------ rendering

def test_clean_page_renders_without_errors_and_is_not_blank(rendered):
    result = rendered["clean"]
    assert result["errors"] == []
    assert result["nonblank"], result["pixels"]
    assert pathlib.Path(result["screenshot"]).is_file()
    assert result["pixels"]["width"] == 1280 and result["pixels"]["height"] == 600
    document = result["document"]
    assert document.find("main", data_report="estimate") is not None
    assert {e.attrs["data-chart"] for e in document.find_all(data_chart=True)} == {"time-breakdown", "timeline"}
    assert document.find("table").has_class("sortable")
    # The page's scripts ran before the DOM was dumped.
    assert document.find("h1").attrs.get("data-drawn") == "yes"
    assert browser_check.find_urls(CLEAN_PAGE) == []
    mismatches = browser_check.check_numbers(result["document"], {"iteration_time_s": 4.859396209699871,
                                                                  "peak_memory_gib": 55.290283203125})
    assert list(mismatches) == [] and mismatches.checked == 2


def test_a_throw_is_reported(rendered):
    errors = rendered["faulty"]["errors"]
    assert any(e.startswith("uncaught: Error: deliberate failure") for e in errors), errors


def test_console_error_and_unhandled_rejection_are_reported(rendered):
    errors = rendered["faulty"]["errors"]
    assert any(e == "console.error: bad thing 42" for e in errors), errors
    assert any(e.startswith("unhandledrejection: Error: nobody caught me") for e in errors), errors
    assert not any("fine" in e for e in errors), errors


def test_a_syntax_error_is_reported(rendered):
    errors = rendered["faulty"]["errors"]
    assert any("SyntaxError" in e for e in errors), errors


def test_chromium_logs_uncaught_errors_on_stderr(rendered):
    # The second source of errors: Chromium's own CONSOLE log lines (this version logs them all at INFO).
    result = rendered["faulty"]
    logged = [message for message, _ in browser_check.console_errors_from_stderr(result["stderr"])]
    assert "TypeError: logged too" in logged, result["stderr"]
    assert "Error: nobody caught me" in logged, result["stderr"]
    # Seen by both the probe and stderr: reported once.
    assert sum("logged too" in e for e in result["errors"]) == 1, result["errors"]


def test_a_white_page_is_blank(rendered):
    result = rendered["white"]
    assert result["errors"] == []
    assert not result["nonblank"]
    assert result["pixels"]["other_share"] < 0.01


def test_page_height_is_measured(tmp_path):
    tall = CLEAN_PAGE.replace("<body>", "<body><div style=\"height: 2500px; background: #eef\"></div>")
    result = browser_check.render(write(tmp_path, "tall.html", tall), tmp_path / "out")
    assert result["errors"] == []
    assert result["page_height"] > 2500
    assert result["height"] == result["page_height"] == result["pixels"]["height"]


def test_missing_chromium_is_an_error(tmp_path):
    page = write(tmp_path, "clean.html", CLEAN_PAGE)
    with pytest.raises(browser_check.BrowserError, match="not found"):
        browser_check.render(page, tmp_path / "out", binary=str(tmp_path / "no-such-chromium"))


def test_probe_goes_first_in_head():
    probed = browser_check.inject_probe("<!DOCTYPE html><html><head><script>x()</script></head></html>")
    assert probed.index("data-browser-check-probe") < probed.index("x()")
    assert "data-browser-check-probe" in browser_check.inject_probe("<p>no head</p>")


def test_urls_are_found():
    for bad in ['<img src="a.png">', '<a href="https://example.com">', "<style>@import 'x.css';</style>",
                '<div style="background: url(x.png)">', '<a href="other.html">', "see http://x"]:
        assert browser_check.find_urls(bad), bad
    assert browser_check.find_urls('<a href="#plans">plans</a> <a href=\'#top\'>top</a>') == []


# ----------------------------------------------------------------------------------------------- PNG

@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_png_decoder_reads_every_filter(channels):
    rng = random.Random(channels)
    width, height = 23, 17
    pixels = bytes(rng.randrange(256) if rng.random() < 0.5 else (x * 11 + y * 7) & 255
                   for y in range(height) for x in range(width * channels))
    png = browser_check.encode_png(width, height, channels, pixels, filters=(0, 1, 2, 3, 4, 4, 3, 2, 1))
    filters_used = set()
    raw = zlib.decompress(png[8 + 25 + 8:-12 - 4])  # IDAT body: after signature, IHDR, IDAT length+type
    for y in range(height):
        filters_used.add(raw[y * (width * channels + 1)])
    assert filters_used == {0, 1, 2, 3, 4}
    image = browser_check.decode_png(png)
    assert (image.width, image.height, image.channels) == (width, height, channels)
    assert image.data == pixels
    assert image.pixel(5, 3) == tuple(pixels[(3 * width + 5) * channels:(3 * width + 6) * channels])


def test_png_stats_and_blankness():
    width, height = 100, 50
    white = bytes([255, 255, 255, 255]) * (width * height)
    stats = browser_check.pixel_stats(browser_check.decode_png(browser_check.encode_png(width, height, 4, white)))
    assert stats["distinct_colours"] == 1 and stats["other_share"] == 0 and stats["most_common"] == "#ffffffff"
    assert not browser_check.is_nonblank(stats)
    striped = bytearray(white)
    for y in range(height):
        for x in range(0, width, 3):
            at = (y * width + x) * 4
            striped[at:at + 3] = bytes([(x * 5) & 255, (y * 5) & 255, 128])
    stats = browser_check.pixel_stats(browser_check.decode_png(browser_check.encode_png(width, height, 4,
                                                                                        bytes(striped), (4, 1))))
    assert stats["other_share"] > 0.3 and stats["distinct_colours"] > 16
    assert browser_check.is_nonblank(stats)


def test_png_decoder_rejects_bad_input():
    png = browser_check.encode_png(2, 2, 3, bytes(12))
    with pytest.raises(ValueError, match="signature"):
        browser_check.decode_png(b"GIF89a" + png[6:])
    corrupt = bytearray(png)
    corrupt[20] ^= 1  # inside IHDR: the CRC no longer matches
    with pytest.raises(ValueError, match="CRC"):
        browser_check.decode_png(bytes(corrupt))
    ihdr = struct.pack(">IIBBBBB", 2, 2, 16, 2, 0, 0, 0)
    sixteen = png[:8] + struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr)) + png[33:]
    with pytest.raises(ValueError, match="bit depth 16"):
        browser_check.decode_png(sixteen)


# ------------------------------------------------------------------------------------------- numbers

DOC = {"iteration_time_s": 4.859396209699871, "mfu": 0.38270776299797243, "tokens_per_s": 53950.0,
       "fits": True, "model": "llama3-70b", "breakdown": {"compute_s": 3.536563333251638, "cp_comm_s": 0.0},
       "plans": [{"iteration_time_s": 1.25}, {"iteration_time_s": 2.5, "estimate": {"mfu": 0.5}}],
       "big": 1.1776099386969293e+17}


def number(path, value, text, scale=None):
    scale_attr = f' data-scale="{scale}"' if scale is not None else ""
    return f'<span data-json="{path}" data-value="{value!r}"{scale_attr}>{text}</span>'


def check(*spans):
    return browser_check.check_numbers("<main data-report=\"estimate\">" + "".join(spans) + "</main>", DOC)


def test_json_path():
    assert browser_check.json_path(DOC, "breakdown.compute_s") == DOC["breakdown"]["compute_s"]
    assert browser_check.json_path(DOC, "plans[1].estimate.mfu") == 0.5
    assert browser_check.json_path(DOC, "plans[0].iteration_time_s") == 1.25
    for bad in ["plans[2].iteration_time_s", "breakdown.nope", "model.length", "plans.x", "mfu[0]"]:
        with pytest.raises(KeyError):
            browser_check.json_path(DOC, bad)


def test_correct_numbers_are_accepted():
    result = check(number("iteration_time_s", DOC["iteration_time_s"], "4.86 s"),
                   number("iteration_time_s", DOC["iteration_time_s"], "4.8594 s"),
                   number("iteration_time_s", DOC["iteration_time_s"], "5 s"),
                   number("iteration_time_s", DOC["iteration_time_s"], "4,859.4 ms", scale=1000),
                   number("mfu", DOC["mfu"], "38.3%", scale=100),
                   number("tokens_per_s", 53950.0, "53,950 tokens/s"),
                   number("breakdown.compute_s", DOC["breakdown"]["compute_s"], "  3.537 s"),
                   number("breakdown.cp_comm_s", 0.0, "0.00 s"),
                   number("plans[1].estimate.mfu", 0.5, "0.50"),
                   number("big", DOC["big"], "117.76 PFLOP", scale=1e-15),
                   number("big", DOC["big"], "1.18e17"))
    assert list(result) == []
    assert result.checked == 11


def test_a_wrong_value_is_caught():
    result = check(number("iteration_time_s", 4.86, "4.86 s"))
    assert len(result) == 1 and "data-value" in result[0], result
    assert len(check(number("mfu", DOC["mfu"] * (1 + 1e-9), "38.3%", scale=100))) == 1
    assert len(check(number("plans[1].iteration_time_s", 1.25, "1.25 s"))) == 1


def test_a_wrongly_rounded_text_is_caught():
    assert len(check(number("iteration_time_s", DOC["iteration_time_s"], "4.85 s"))) == 1
    assert len(check(number("iteration_time_s", DOC["iteration_time_s"], "4.8 s"))) == 1
    assert len(check(number("mfu", DOC["mfu"], "38.2%", scale=100))) == 1
    assert len(check(number("mfu", DOC["mfu"], "0.383%"))) == 0
    assert len(check(number("mfu", DOC["mfu"], "38.3%"))) == 1  # the scale is missing
    assert len(check(number("tokens_per_s", 53950.0, "53,960 tokens/s"))) == 1
    assert len(check(number("iteration_time_s", DOC["iteration_time_s"], "4,860 ms", scale=1000))) == 1


def test_other_contract_violations_are_caught():
    assert len(check(number("breakdown.nope", 1.0, "1.0"))) == 1
    assert len(check(number("model", 1.0, "1.0"))) == 1  # not a number
    assert len(check(number("fits", 1.0, "1"))) == 1  # a bool is not a number
    assert len(check(number("iteration_time_s", DOC["iteration_time_s"], "about 4.86 s"))) == 1
    assert len(check('<span data-json="mfu" data-value="n/a">38%</span>')) == 1
    assert len(check('<span data-json="mfu">38%</span>')) == 1


def test_the_cli_reports_problems(tmp_path, capsys, monkeypatch, rendered):
    page = write(tmp_path, "clean.html", CLEAN_PAGE)
    doc = write(tmp_path, "doc.json", json.dumps({"iteration_time_s": 4.859396209699871,
                                                  "peak_memory_gib": 55.290283203125}))
    assert browser_check.main([str(page), "--out", str(tmp_path / "out"), "--height", "500",
                               "--json", str(doc)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["numbers_checked"] == 2 and report["nonblank"]
    doc.write_text(json.dumps({"iteration_time_s": 4.0, "peak_memory_gib": 55.290283203125}))
    monkeypatch.setattr(browser_check, "render", lambda *args, **kwargs: rendered["clean"])  # the same page
    assert browser_check.main([str(page), "--out", str(tmp_path / "out"), "--height", "500",
                               "--json", str(doc)]) == 1


def test_report_screenshots_of_a_given_page(tmp_path, capsys, monkeypatch, rendered):
    import report_screenshots
    page = write(tmp_path, "estimate.html", CLEAN_PAGE)
    assert report_screenshots.main(["--page", f"estimate={page}", "--out-dir", str(tmp_path / "shots")]) == 0
    png = tmp_path / "shots" / "estimate.png"
    assert f"wrote {png}" in capsys.readouterr().out
    image = browser_check.decode_png(png.read_bytes())
    assert image.width == 1280 and 200 <= image.height <= 1600
    assert browser_check.is_nonblank(browser_check.pixel_stats(image))
    broken = write(tmp_path, "plan.html", FAULTY_PAGE)
    monkeypatch.setattr(browser_check, "render", lambda *args, **kwargs: rendered["faulty"])  # the same page
    with pytest.raises(RuntimeError, match="console errors"):
        report_screenshots.main(["--page", f"plan={broken}", "--out-dir", str(tmp_path / "shots")])
    assert not (tmp_path / "shots" / "plan.png").exists()


def test_a_hung_page_times_out_and_leaves_no_profile(tmp_path):
    page = write(tmp_path, "hang.html", page_with_script("while (true) {}"))
    before = set(pathlib.Path(browser_check.tempfile.gettempdir()).glob("browser-check-profile-*"))
    with pytest.raises(browser_check.BrowserError, match="ran past"):
        browser_check.render(page, tmp_path / "out", height=300, timeout=6)
    after = set(pathlib.Path(browser_check.tempfile.gettempdir()).glob("browser-check-profile-*"))
    assert after <= before
