"""Open every page of the built documentation in headless Chromium and check what a reader sees.

For each HTML page of the site, served from 127.0.0.1, the check asserts that

* every formula is typeset: MathJax has finished, no ``mjx-merror`` node (a TeX error) exists,
  no ``arithmatex`` span is left as raw TeX, and the derivation pages do hold typeset math;
* every image has loaded (``complete`` and ``naturalWidth > 0``);
* no table is clipped: a table wider than its column sits in a box that scrolls horizontally
  (``overflow-x: auto`` or ``scroll``), no box with hidden overflow cuts it, and the page
  itself does not overflow the window;
* the page requested nothing from another host, and the browser logged no error.

It saves full-page screenshots of the home page, a derivation page and the benchmarks page
in the output directory.  Usage::

    python tools/browser_check.py --site site --output build/browser

Needs Debian's ``chromium`` and ``chromium-driver`` (``/usr/bin/chromedriver``) and the Python
package ``selenium``; runs as root (``--no-sandbox``).  Exit status 0 when every page passes.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import sys
import threading
from pathlib import Path

SCREENSHOTS = {"home": "index.html", "derivation": "derivations/robust_counterpart/index.html",
               "benchmarks": "benchmarks/index.html", "sha2002": "reproductions/sha2002/index.html",
               "woolnough2022": "reproductions/woolnough2022/index.html"}
WIDTH, HEIGHT = 1400, 1000

# Runs in the page once MathJax is done; returns what the checks need.
_INSPECT = r"""
const done = arguments[arguments.length - 1];
const ready = (window.MathJax && MathJax.startup && MathJax.startup.promise)
    ? MathJax.startup.promise : Promise.resolve();
const images = Promise.all([...document.images].map(img => img.complete ? null :
    new Promise(r => { img.addEventListener('load', r); img.addEventListener('error', r); })));
Promise.all([ready, images]).then(() => {
  const arith = [...document.querySelectorAll('.arithmatex')];
  const raw = arith.filter(el => !el.querySelector('mjx-container')).map(el => el.textContent.slice(0, 80));
  const badImages = [...document.images].filter(i => !i.complete || i.naturalWidth === 0)
      .map(i => i.getAttribute('src'));
  const clipped = [];
  document.querySelectorAll('table').forEach((t, k) => {
    if (t.closest('.highlighttable, .md-search')) return;
    const r = t.getBoundingClientRect();
    let scrolls = false;
    for (let el = t.parentElement; el && el !== document.body; el = el.parentElement) {
      const ox = getComputedStyle(el).overflowX;
      if (ox === 'auto' || ox === 'scroll') { scrolls = true; break; }
      if ((ox === 'hidden' || ox === 'clip') && t.scrollWidth > el.clientWidth + 1) {
        clipped.push(`table ${k}: cut by a box with overflow ${ox}`); return; }
    }
    if (!scrolls && r.right > window.innerWidth + 1)
      clipped.push(`table ${k}: ${Math.round(r.right)} px wide in a ${window.innerWidth} px window, no scrolling box`);
  });
  const origin = location.origin;
  const foreign = performance.getEntriesByType('resource').map(e => e.name)
      .filter(u => !u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:'));
  done({
    mathjax: !!(window.MathJax && MathJax.startup && MathJax.startup.document),
    math: document.querySelectorAll('mjx-container').length,
    arithmatex: arith.length,
    raw: raw,
    errors: [...document.querySelectorAll('mjx-merror, [data-mjx-error]')].map(e =>
        e.getAttribute('data-mjx-error') || e.textContent),
    images: document.images.length,
    badImages: badImages,
    tables: document.querySelectorAll('table').length,
    clipped: clipped,
    pageOverflow: document.documentElement.scrollWidth > window.innerWidth + 1,
    foreign: foreign,
  });
});
"""


def _serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def _driver(chromium: str, chromedriver: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={WIDTH},{HEIGHT}", "--hide-scrollbars"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=opts)
    driver.set_script_timeout(60)
    driver.set_page_load_timeout(60)
    return driver


def _screenshot(driver, path: Path) -> None:
    """Full-page PNG: the window is made as tall as the page (up to 12000 px), then restored.

    (Capturing beyond the viewport through the DevTools protocol leaves blank tiles over
    MathJax's SVG; a tall window renders the page as a reader sees it.)
    """
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    driver.set_window_size(WIDTH, min(max(height, HEIGHT), 12000))
    driver.execute_async_script("const done = arguments[arguments.length - 1]; "
                                "requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 300)));")
    driver.save_screenshot(str(path))
    driver.set_window_size(WIDTH, HEIGHT)


def check_page(driver, url: str, rel: str) -> tuple[list[str], dict]:
    """Load one page and return its problems (empty when it passes) and the inspection."""
    driver.get(url)
    info = driver.execute_async_script(_INSPECT)
    problems = []
    if info["arithmatex"] and not info["mathjax"]:
        problems.append("MathJax did not load")
    if info["raw"]:
        problems.append(f"{len(info['raw'])} formulas left as raw TeX, e.g. {info['raw'][0]!r}")
    if info["errors"]:
        problems.append(f"MathJax errors: {info['errors'][:3]}")
    if rel.startswith("derivations/") and info["math"] == 0:
        problems.append("a derivation page without typeset math")
    if info["badImages"]:
        problems.append(f"images not loaded: {info['badImages']}")
    problems += info["clipped"]
    if info["pageOverflow"]:
        problems.append("the page is wider than the window")
    if info["foreign"]:
        problems.append(f"requests to other hosts: {info['foreign'][:3]}")
    severe = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    if severe:
        problems.append(f"browser errors: {severe[:3]}")
    return problems, info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=Path("site"), help="the built site (mkdocs build)")
    parser.add_argument("--output", type=Path, default=Path("build/browser"), help="where screenshots go")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--chromedriver", default=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    args = parser.parse_args(argv)
    site = args.site.resolve()
    if not (site / "index.html").is_file():
        parser.error(f"--site {site} holds no index.html: build the docs first (make docs)")
    for exe in (args.chromium, args.chromedriver):
        if not Path(exe).is_file():
            parser.error(f"{exe} not found: apt-get install chromium chromium-driver")
    args.output.mkdir(parents=True, exist_ok=True)
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("index.html"))
    server, base = _serve(site)
    driver = _driver(args.chromium, args.chromedriver)
    failed = 0
    totals = {"math": 0, "images": 0, "tables": 0}
    try:
        for rel in pages:
            problems, info = check_page(driver, base + rel, rel)
            for key in totals:
                totals[key] += info[key]
            status = "ok  " if not problems else "FAIL"
            print(f"{status} {rel}: {info['math']} formulas, {info['images']} images, {info['tables']} tables")
            for problem in problems:
                print(f"       {problem}")
            failed += bool(problems)
            for name, target in SCREENSHOTS.items():
                if rel == target:
                    _screenshot(driver, args.output / f"{name}.png")
    finally:
        driver.quit()
        server.shutdown()
    missing = [t for t in SCREENSHOTS.values() if t not in pages]
    if missing:
        print(f"FAIL pages to screenshot are missing: {missing}")
        failed += 1
    print(f"{len(pages)} pages, {totals['math']} formulas, {totals['images']} images, {totals['tables']} tables; "
          f"screenshots in {args.output}")
    print(f"site check: {len(pages) - failed} pages without problems, {failed} with problems")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
