"""Rebuild the explorer screenshots of docs/EXPLORER.md (headless Chromium, the tests' driver).

The data is the demo's synthetic preset (``rubric-v2-2026-09-19``: 38 sessions, scored under
rubric-v1 as built, then journaled under rubric-v2 too). Run from the repository root:
``.venv/bin/python docs/explorer_screenshots.py``; it writes ``docs/explorer-*.png``.
"""

from __future__ import annotations

import io
import sys
import tempfile
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import conftest  # noqa: E402, F401 - binds the name "tests" to this repository's tests

from evalkit import journal  # noqa: E402
from evalkit.cli.main import main  # noqa: E402
from evalkit.simulate.ledgers import build_preset  # noqa: E402
from tests.browser import DevTools, chromium, open_page  # noqa: E402

WIDTH = 900  # the PNGs are scaled down to this width


def _flipped_run(path: Path) -> str:
    """The rubric-v1 run id of a session whose verdicts flip most under rubric-v2."""
    by: dict[str, dict[str, dict]] = {}
    for rec in journal.read(path).records:
        by.setdefault(rec["session_id"], {})[rec["rubric_version"]] = rec

    def flips(pair: dict[str, dict]) -> int:
        a = {d["id"]: d["status"] for d in pair["rubric-v1"]["dimensions"]}
        b = {d["id"]: d["status"] for d in pair["rubric-v2"]["dimensions"]}
        return sum(a[k] != b[k] for k in a if k in b)

    pairs = [p for p in by.values() if len(p) == 2]
    return max(pairs, key=flips)["rubric-v1"]["run_id"]


def _save(png: bytes, out: Path) -> None:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    height = round(image.height * WIDTH / image.width)
    image = image.resize((WIDTH, height), Image.LANCZOS).quantize(colors=256)
    image.save(out, optimize=True)
    print(f"{out.relative_to(ROOT)}: {out.stat().st_size / 1024:.0f} KiB")


def main_() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        metrics = Path(tmp) / "metrics"
        build_preset(metrics)
        argv = ["score", "--all", "--journal", "--metrics-dir", str(metrics)]
        assert main([*argv, "--rubric", "rubric-v2", "--no-progress"]) == 0
        page = Path(tmp) / "explorer.html"
        assert main(["explore", "--metrics-dir", str(metrics), "--out", str(page)]) == 0
        run = _flipped_run(metrics / "eval.jsonl")
        views = {
            "explorer-records": (None, 0, 1000),
            "explorer-filtered": ("rubric=rubric-v1&dimension=process-safety&status=fail", 0, 1100),
            "explorer-record": ("run=" + run, 0, 1250),
            "explorer-rates": ("rubric=rubric-v2", "#fire-rates", 800),
        }
        with DevTools(chromium(), Path(tmp) / "profile") as tools:
            for name, (fragment, top, height) in views.items():
                y = 0
                if isinstance(top, str):
                    got = open_page(
                        tools,
                        page,
                        f"JSON.stringify(document.querySelector('{top}').getBoundingClientRect().top)",
                        fragment,
                    )
                    y = float(got["extra"])
                shot = open_page(
                    tools,
                    page,
                    None,
                    fragment,
                    clip={"x": 0, "y": y, "width": 1200, "height": height},
                )
                _save(shot["png"], ROOT / "docs" / f"{name}.png")


if __name__ == "__main__":
    main_()
