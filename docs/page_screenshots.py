"""Rebuild the study-page screenshots of docs/screenshots/ (headless Chromium, the tests' driver).

Run from the repository root after ``make demo``: ``.venv/bin/python docs/page_screenshots.py
reports [NAME=PAGE.html ...]``. It writes ``docs/screenshots/<study>.png`` for the landing page
and every study page under ``reports/``, and one PNG per extra ``NAME=PAGE.html`` (a page run
on a real ledger, say). Each is the top of the page (at most ``HEIGHT`` CSS pixels), scaled to
900 pixels wide and quantized (``explorer_screenshots.save_png``), so it stays well under 300 KB.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))
import conftest  # noqa: E402, F401 - binds the name "tests" to this repository's tests
from explorer_screenshots import save_png  # noqa: E402 - the one way a docs PNG is saved

from tests.browser import DevTools, chromium, open_page  # noqa: E402

HEIGHT = 2000  # CSS pixels of the page kept, from its top
OUT = ROOT / "docs" / "screenshots"
_SIZE = "JSON.stringify([document.documentElement.scrollWidth, document.body.scrollHeight])"


def main(reports: Path, extra: dict[str, Path]) -> None:
    """Screenshot the landing page, every study page under ``reports`` and ``extra``."""
    pages = {"landing": reports / "index.html"}
    pages |= {p.parent.name: p for p in sorted(reports.glob("*/index.html"))}
    pages |= extra
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, DevTools(chromium(), Path(tmp) / "p") as tools:
        for name, page in pages.items():
            width, height = open_page(tools, page, _SIZE)["extra"]
            clip = {"x": 0, "y": 0, "width": width, "height": min(height, HEIGHT)}
            save_png(open_page(tools, page, clip=clip)["png"], OUT / f"{name}.png")


if __name__ == "__main__":
    named = dict(arg.split("=", 1) for arg in sys.argv[2:])
    main(Path(sys.argv[1]), {k: Path(v) for k, v in named.items()})
