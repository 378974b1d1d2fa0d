"""The explorer: one self-contained, offline HTML file for a journal (or a fleet of them).

:func:`render_explorer` packs the records (:mod:`evalkit.views.explorer_data`) into the page as
JSON, beside one inline script and one inline style read from ``views/assets/``. The page
fetches nothing: its Content-Security-Policy allows no connection, image, font or frame, and
only that script (by its sha256) and that style. The JSON is written so no text in it can
close its ``<script>`` element (``<``, ``>`` and ``&`` are JSON escapes), and the script
inserts every string as text. The state of a view is the URL fragment
(``#rubric=rubric-v1&dimension=process-safety&status=fail``, ``#run=RUN_ID``). Usage and the
reasons for plain DOM code are in ``docs/EXPLORER.md``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.files.escape import html_text
from evalkit.files.input import escape_surrogates
from evalkit.journal.reader import JournalRead, read
from evalkit.views.explorer_data import ExplorerSource, explorer_payload
from evalkit.views.report import JUDGE_ADVISORY

if TYPE_CHECKING:
    from evalkit.record.calibration_status import CalibrationAcceptance

__all__ = ["ExplorerSource", "build_explorer", "render_explorer", "write_explorer"]

# JSON text that could end the data element or open markup, as JSON escapes (same value)
_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _asset(name: str) -> str:
    return resources.files("evalkit.views").joinpath("assets", name).read_text(encoding="utf-8")


def _sha256_source(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _json_for_script(payload: Mapping[str, Any]) -> str:
    """``payload`` as JSON that is inert inside ``<script type="application/json">``."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char, escape in _JSON_ESCAPES.items():
        text = text.replace(char, escape)
    # a lone surrogate (legal in a JSON string read from a journal) as its JSON escape
    return escape_surrogates(text)


def render_explorer(payload: Mapping[str, Any], *, title: str = "evalkit explorer") -> str:
    """The explorer page for ``payload`` (:func:`~evalkit.views.explorer_data.explorer_payload`)."""
    script, style = _asset("explorer.js"), _asset("explorer.css")
    if "</" in script or "</" in style:  # the assets are ours; keep them closable only by us
        raise AssertionError("an explorer asset contains '</'")
    csp = (
        "default-src 'none'; "
        f"script-src {_sha256_source(script)}; style-src {_sha256_source(style)}; "
        "img-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'"
    )
    data = _json_for_script({**payload, "judge_advisory": JUDGE_ADVISORY})
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{html_text(csp)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html_text(title)}</title>\n<style>{style}</style>\n</head>\n<body>\n"
        '<div id="app"><noscript>The explorer needs JavaScript to show its records. Without it, '
        "<code>evalkit report RUN_ID</code> renders one record as a page with no script."
        "</noscript></div>\n"
        f'<script type="application/json" id="explorer-data">{data}</script>\n'
        f"<script>{script}</script>\n</body>\n</html>\n"
    )


def build_explorer(
    sources: Sequence[ExplorerSource],
    *,
    verify: bool = True,
    accepted: CalibrationAcceptance | None = None,
    progress: Callable[[Iterable[Any], int], Iterable[Any]] | None = None,
    on_read: Callable[[ExplorerSource, JournalRead], None] | None = None,
) -> str:
    """Read every source's journal and render the explorer page (a string).

    ``accepted``: the calibrations a judge dimension may claim (default: ``uncalibrated``
    only). ``verify``: re-verify each journal from its ledger. ``on_read`` sees each journal
    as read (the command line prints its skipped lines). Raises what
    :func:`evalkit.journal.reader.read` raises for a missing or unreadable journal.
    """
    reads = []
    for source in sources:
        got = read(source.journal, accepted=accepted)
        if on_read is not None:
            on_read(source, got)
        reads.append(got)
    payload = explorer_payload(sources, reads, verify=verify, accepted=accepted, progress=progress)
    return render_explorer(payload)


def write_explorer(
    sources: Sequence[ExplorerSource] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    **kwargs: Any,
) -> Path:
    """:func:`build_explorer` into the file ``out`` (UTF-8); returns its path.

    ``sources`` may be one metrics directory (its ``eval.jsonl`` and ledger).
    """
    if isinstance(sources, str | os.PathLike):
        sources = [ExplorerSource.of_metrics_dir(sources)]
    path = Path(out)
    path.write_text(build_explorer(sources, **kwargs), encoding="utf-8")
    return path
