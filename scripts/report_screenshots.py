#!/usr/bin/python3
"""Writes docs/screenshots/<kind>.png, the README's picture of each `--html` report kind, from the binary.

    scripts/report_screenshots.py [build/bin/tessera] [--out-dir DIR] [--kinds estimate,plan] [--full-page]
    scripts/report_screenshots.py --page estimate=PAGE.html [--out-dir DIR]   (an existing page instead)

For each kind it runs the command below with `--html`, renders the page in headless Chromium
(scripts/browser_check.py) 1280 px wide and as tall as the page, at most 1600 px (--full-page: the whole
page), and refuses to write a screenshot of a page with console errors or a blank one. A kind the binary
does not support yet (it exits 2 naming --html) is skipped with a note; so is validate without the public
runs CSV (../shared/validation/public_runs.csv). The same commands drive tests/python/test_html_reports.py.
"""
import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import browser_check  # noqa: E402

KINDS = ("estimate", "validate", "plan", "multimodal")
VALIDATION_CSV = ROOT / "data" / "validation" / "public_runs.csv"
TIMEOUT_S = 60
SCREENSHOT_WIDTH, SCREENSHOT_HEIGHT = 1280, 1600


def report_commands(validation_csv=VALIDATION_CSV):
    """kind -> the tessera arguments (without --json / --html) whose report the kind shows."""
    return {
        "estimate": ["estimate", "--model", "llama3-70b", "--cluster", "h100-sxm-80gb:64",
                     "--plan", "tp=8,pp=4,vpp=2,mb=1,gbs=64,seq=4096"],
        "validate": ["validate", str(validation_csv)],
        "plan": ["plan", "--model", "llama3-8b", "--cluster", "h100-sxm-80gb:16", "--gbs", "64", "--seq", "4096",
                 "--quiet"],
        "multimodal": ["plan", "--model", "mllm-72b-gen", "--data", "caption-like", "--cluster", "h800:1296",
                       "--gbs", "1920", "--top", "1"],
    }


def unsupported_html(completed):
    """The binary rejected --html (CLI11 exits 2 and names the option): the kind is not implemented yet."""
    return completed.returncode == 2 and "--html" in (completed.stderr or "")


def write_report(binary, kind, html_path, validation_csv=VALIDATION_CSV):
    """Runs kind's command with --html html_path. Returns None when written, else why not (a skip)."""
    if kind == "validate" and not pathlib.Path(validation_csv).is_file():
        return f"{validation_csv} is absent"
    args = report_commands(validation_csv)[kind]
    completed = subprocess.run([binary, *args, "--html", str(html_path)], capture_output=True, text=True,
                               timeout=TIMEOUT_S, cwd=ROOT)
    if unsupported_html(completed):
        return f"`tessera {args[0]}` does not support --html for {kind} yet: {completed.stderr.strip()}"
    if completed.returncode != 0:
        raise RuntimeError(f"tessera {' '.join(args)} --html exited {completed.returncode}: {completed.stderr}")
    return None


def screenshot(html_path, png_path, full_page=False):
    """Renders html_path into png_path; raises on console errors or a blank page. Returns render()'s result."""
    with tempfile.TemporaryDirectory(prefix="report-screenshot-") as tmp:
        result = browser_check.render(html_path, tmp, width=SCREENSHOT_WIDTH,
                                      max_height=browser_check.MAX_HEIGHT if full_page else SCREENSHOT_HEIGHT)
        if result["errors"]:
            raise RuntimeError(f"{html_path}: console errors: {result['errors']}")
        if not result["nonblank"]:
            raise RuntimeError(f"{html_path}: the screenshot is blank: {result['pixels']}")
        png_path = pathlib.Path(png_path)
        png_path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(result["screenshot"], png_path)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", nargs="?", default=str(ROOT / "build" / "bin" / "tessera"))
    parser.add_argument("--out-dir", default=str(ROOT / "docs" / "screenshots"))
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated, of " + ", ".join(KINDS))
    parser.add_argument("--page", action="append", default=[], metavar="KIND=PAGE.html",
                        help="screenshot this existing page as KIND instead of running the binary (repeatable)")
    parser.add_argument("--full-page", action="store_true", help="the whole page, not at most 1600 px")
    args = parser.parse_args(argv)
    out_dir = pathlib.Path(args.out_dir)

    pages = {}
    for item in args.page:
        kind, _, path = item.partition("=")
        if kind not in KINDS or not path:
            parser.error(f"--page {item!r}: want KIND=PAGE.html with KIND one of {', '.join(KINDS)}")
        pages[kind] = pathlib.Path(path)
    kinds = list(pages) if pages else [k for k in args.kinds.split(",") if k]
    for kind in kinds:
        if kind not in KINDS:
            parser.error(f"unknown kind {kind!r}: want one of {', '.join(KINDS)}")

    wrote = 0
    with tempfile.TemporaryDirectory(prefix="report-pages-") as tmp:
        for kind in kinds:
            html_path = pages.get(kind)
            if html_path is None:
                html_path = pathlib.Path(tmp) / f"{kind}.html"
                why_not = write_report(args.binary, kind, html_path)
                if why_not:
                    print(f"skipped {kind}: {why_not}")
                    continue
            png_path = out_dir / f"{kind}.png"
            result = screenshot(html_path, png_path, args.full_page)
            print(f"wrote {png_path} ({result['width']}x{result['height']}, {png_path.stat().st_size} bytes, "
                  f"{result['pixels']['distinct_colours']} colours)")
            wrote += 1
    if wrote == 0:
        print("wrote nothing", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
