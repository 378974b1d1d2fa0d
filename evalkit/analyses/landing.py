"""The landing page ``reports/index.html`` that ``evalkit demo`` writes over the study pages.

One self-contained, offline page (inline CSS, no script, no external reference): per study its
status and its headline (a figure and a sentence with its CI and n, written by the study's own
``headline(results)``, :data:`HEADLINES`; this module knows no study's results format), the
qualifying lines and parameters folded one click away, and the provenance (git commit, evalkit version, the default data and
their data card) plus what these reports do not prove. The same inputs give the same bytes: no
clock, no timing, no absolute path of the output directory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from pathlib import Path
from typing import Any
from urllib.parse import quote

from evalkit.analyses.headline import Headline
from evalkit.files.escape import html_text
from evalkit.provenance.repository import REPO_ROOT

__all__ = ["HEADLINES", "Headline", "headline", "render_index"]

DATA_CARD = REPO_ROOT / "docs" / "DATA_CARD.md"
PRESET = "rubric-v2-2026-09-19"


#: Where each study's headline lives: ``headline(results) -> Headline`` beside its analysis.
HEADLINES: dict[str, str] = {
    "threshold-study": "evalkit.analyses.threshold_headline",
    "judge-calibration": "evalkit.analyses.calibration",
    "agreement-study": "evalkit.analyses.agreement",
    "rubric-replay": "evalkit.analyses.replay",
    "prevalence-study": "evalkit.analyses.prevalence_page",
    "monitor": "evalkit.analyses.monitor_page",
}


def headline(study: str, results: Mapping[str, Any]) -> Headline | None:
    """The headline of ``study`` from its results, or None when it has none / the keys lack."""
    where = HEADLINES.get(study)
    if where is None or results.get("status") != "ok":
        return None
    fn: Callable[[Mapping[str, Any]], Headline] = import_module(where).headline
    try:
        return fn(results)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None


# ----------------------------------------------------------------------------------- render

_CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1f2328;
max-width:1000px;margin:2em auto;padding:0 1.2em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:1.8em;
border-bottom:1px solid #d0d7de;padding-bottom:.2em}h3{font-size:1.1em;margin:0}
.studies{display:grid;grid-template-columns:repeat(auto-fill,minmax(440px,1fr));gap:1em}
.study{border:1px solid #d0d7de;border-left-width:6px;border-radius:4px;padding:.6em 1em;
margin:0;min-width:0}.study p.muted,.study p.advisory{font-size:.88em}.study.ok{border-left-color:#1a7f37}.study.failed{border-left-color:#cf222e}
.badge{display:inline-block;font-weight:bold;font-size:.85em;padding:0 .5em;border-radius:3px;
color:#fff;margin-left:.5em;vertical-align:middle}.badge.ok{background:#1a7f37}
.badge.failed{background:#cf222e}.headline{margin:.2em 0 .4em}
.figure{font-size:1.45em;font-weight:600;margin:.3em 0 0;color:#0b3d75}
.advisory{background:#fff8c5;border:1px solid #d4a72c;padding:.3em .6em;border-radius:3px}
.error{background:#ffebe9;border:1px solid #cf222e;padding:.3em .5em;white-space:pre-wrap;
font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em}
table{border-collapse:collapse;font-size:.88em;margin:.4em 0}
th,td{border:1px solid #d0d7de;padding:.15em .5em;text-align:left;vertical-align:top}
th{background:#f6f8fa}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}
details{margin:.4em 0}summary{cursor:pointer}details.more>summary{color:#0969da}ul.details{margin:.3em 0;padding-left:1.3em}
pre.card{white-space:pre-wrap;background:#f6f8fa;padding:.8em;font-size:.85em}
.muted{color:#59636e}
"""

_NOT_PROVEN = (
    "The default data are synthetic (see the data card): they reproduce counts the rubric-v2 "
    "seeds report, not the sessions behind them. Figures on the default data describe the "
    "simulator and the rubrics together, not any real project.",
    "Each interval is a 95% interval for its own figure; these pages show many figures and make "
    "no correction for multiple comparisons.",
    "A threshold whose fire rate lies within the ceiling is allowed to speak; that does not make "
    "it right. Whether a counted event is misconduct is argued in the rubric, not measured here.",
    "Agreement between raters is not accuracy: raters can agree on a wrong label.",
    "A judge's agreement with the gold set measures it against the gold labellers' reading. Judge "
    "figures are advisory until the calibration graduates and is registered.",
    "A dead-instrument flag is a reason to look, not a verdict: a rare class and a broken "
    "instrument look the same from outside.",
    "A judge-error-corrected share holds only if the judge errs on the target as it did on the "
    "gold set; nothing on these pages can detect a judge that does not. PPI++ needs no such "
    "assumption, but a random human-labelled subsample of the target.",
    "Status ok means the notebook ran without error. It says nothing about whether the figures "
    "are favourable.",
)


def _value_text(key: str, value: Any, out_dir: Path | None) -> str:
    if isinstance(value, str):
        if value == "":
            return '"" (default)'
        if out_dir is not None and (key.endswith("_dir") or key.endswith("_path")):
            try:
                return Path(value).resolve().relative_to(out_dir.resolve()).as_posix()
            except (ValueError, OSError):
                return value
        return value
    return json.dumps(value, ensure_ascii=False)


def _declared_help(study: str) -> dict[str, str]:
    try:
        from evalkit.studies.run import declared_parameters

        return {p.name: p.help for p in declared_parameters(study).values()}
    except Exception:  # a missing notebook only costs the help column
        return {}


def _parameters_table(study: str, params: Mapping[str, Any], out_dir: Path | None) -> str:
    if not params:
        return '<p class="muted">No parameters recorded.</p>'
    helps = _declared_help(study)
    rows = "".join(
        f"<tr><td><code>{html_text(k)}</code></td><td><code>{html_text(_value_text(k, v, out_dir))}</code>"
        f"</td><td>{html_text(helps.get(k, ''))}</td></tr>"
        for k, v in params.items()
    )
    return (
        "<table><tr><th>parameter</th><th>value</th>"
        f"<th>meaning (declared in the notebook)</th></tr>{rows}</table>"
    )


def _read_results(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, "results.json was not written"
    except (OSError, ValueError) as exc:
        return None, f"results.json unreadable: {exc}"
    if not isinstance(data, dict):
        return None, "results.json is not a JSON object"
    return data, None


def _study_section(row: Mapping[str, Any], out_dir: Path | None) -> tuple[str, dict[str, Any]]:
    name = str(row["study"])
    res, problem = (None, None)
    if out_dir is not None:
        res, problem = _read_results(out_dir / name / "results.json")
    res = res or {}
    status = str(res.get("status") or row.get("status") or "failed")
    if status not in ("ok", "failed"):
        status = "failed"
    if problem and status == "ok":
        status = "failed"
    error = res.get("error") or row.get("error") or problem
    link = html_text(quote(name, safe=""))  # a relative link, whatever the name holds
    parts = [
        f'<section class="study {status}" id="study-{html_text(name)}">',
        f'<h3><a href="{link}/index.html">{html_text(name)}</a>'
        f'<span class="badge {status}">{status}</span></h3>',
    ]
    head = headline(name, res) if status == "ok" else None
    more: list[str] = []  # one click away: what qualifies the headline, the parameters
    if head is not None:
        if head.figure:
            parts.append(f'<p class="figure">{html_text(head.figure)}</p>')
        parts.append(f'<p class="headline">{html_text(head.text)}</p>')
        if head.advisory:
            parts.append(f'<p class="advisory">{html_text(head.advisory)}</p>')
        if head.details:
            more.append(
                '<ul class="details">'
                + "".join(f"<li>{html_text(d)}</li>" for d in head.details)
                + "</ul>"
            )
    elif status == "ok":
        parts.append('<p class="muted">No headline figure for this study; see its page.</p>')
    else:
        parts.append("<p>The study failed; its page shows the failing cell. No figure is taken "
                     "from a failed run.</p>")  # fmt: skip
    if error:
        parts.append(f'<div class="error">{html_text(error)}</div>')
    parts.append(_prereg_line(res))
    more.append(_parameters_table(name, res.get("parameters") or {}, out_dir))
    what = "details and parameters" if head is not None and head.details else "parameters"
    parts.append(f'<details class="more"><summary>{what}</summary>{"".join(more)}</details>')
    links = [f'<a href="{link}/index.html">page</a>']
    if out_dir is None or (out_dir / name / "results.json").is_file():
        links.append(f'<a href="{link}/results.json">results.json</a>')
    parts.append(f'<p class="muted">{" · ".join(links)}</p></section>')
    return "\n".join(parts), res


def _prereg_line(res: Mapping[str, Any]) -> str:
    """Under what the run stands: pre-registered (entry, version, date), a deviation, or not."""
    pre = res.get("preregistration")
    if not isinstance(pre, Mapping):
        return '<p class="advisory">Pre-registration: not recorded in results.json.</p>'
    raw = pre.get("entry")
    entry: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    where = (
        f"entry {entry.get('name')} version {entry.get('version')}, locked on "
        f"{entry.get('locked_on')}"
    )
    if pre.get("amended"):
        where += f" (amended; originally locked on {pre.get('original_locked_on')})"
    status = pre.get("status")
    if status == "pre-registered":
        return f'<p class="muted">Pre-registered: {html_text(where)}.</p>'
    if status == "deviation":
        names = ", ".join(str(d.get("parameter")) for d in pre.get("deviations") or [])
        return (
            f'<p class="advisory">Deviation from the pre-registration ({html_text(where)}): '
            f"{html_text(names)}. Reason given: {html_text(pre.get('deviation_reason'))}</p>"
        )
    return (
        '<p class="advisory">Not pre-registered: this study ran without the lock '
        "(--no-lock); its figures are exploratory.</p>"
    )


def _provenance(results: Sequence[Mapping[str, Any]]) -> str:
    commits = sorted({str(r.get("git_commit")) for r in results if r.get("git_commit")})
    dirty = any(r.get("git_dirty") for r in results)
    versions = sorted(
        {str((r.get("versions") or {}).get("evalkit")) for r in results if r.get("versions")}
    )
    pythons = sorted(
        {str((r.get("versions") or {}).get("python")) for r in results if r.get("versions")}
    )
    if not commits:
        commit = "unknown (not run from a git checkout)"
    elif len(commits) == 1:
        commit = commits[0]
    else:
        commit = "differs between studies: " + ", ".join(commits)
    if dirty:
        commit += " (working tree had uncommitted changes or untracked files: git_dirty_paths)"
    rows = [
        ("git commit", commit),
        ("evalkit version", ", ".join(versions) or "unknown"),
        ("Python", ", ".join(pythons) or "unknown"),
        ("package versions", "listed per study in its results.json (versions)"),
    ]
    return (
        "<table>"
        + "".join(
            f"<tr><th>{html_text(k)}</th><td><code>{html_text(v)}</code></td></tr>" for k, v in rows
        )
        + "</table>"
    )


def _data_card() -> str:
    try:
        text = DATA_CARD.read_text(encoding="utf-8")
    except OSError:
        return (
            '<p class="muted">The data card (docs/DATA_CARD.md in the source repository) is not '
            "part of this installation.</p>"
        )
    return (
        '<details id="data-card"><summary>Data card (docs/DATA_CARD.md, full text)</summary>'
        f'<pre class="card">{html_text(text)}</pre></details>'
    )


def render_index(rows: Sequence[Mapping[str, Any]], out_dir: str | Path | None = None) -> str:
    """The landing page over the studies in ``rows`` (``study``, ``status``, ``error``).

    Figures are read from ``<out_dir>/<study>/results.json``; a study whose results are missing
    or unreadable shows as failed. Same rows and results give the same bytes.
    """
    out = Path(out_dir) if out_dir is not None else None
    sections, results = [], []
    for row in rows:
        section, res = _study_section(row, out)
        sections.append(section)
        if res:
            results.append(res)
    n_ok = sum(1 for s in sections if 'class="study ok"' in s)
    n_failed = len(sections) - n_ok
    summary = f"{n_ok} of {len(sections)} studies ran without error" + (
        f"; {n_failed} failed" if n_failed else ""
    )
    not_proven = "".join(f"<li>{html_text(t)}</li>" for t in _NOT_PROVEN)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>evalkit studies on the default data</title>\n"
        f"<style>{_CSS}</style>\n</head>\n<body>\n"
        "<h1>evalkit studies on the default data</h1>\n"
        f"<p>{html_text(summary)}. Every figure below is copied from the study's results.json; its "
        "page shows how it was computed. Intervals are 95%; n is given with every figure.</p>\n"
        '<h2>Studies</h2>\n<div class="studies">' + "\n".join(sections) + "</div>\n"
        "<h2>Data</h2>\n"
        f"<p>Default data: the synthetic preset <code>{PRESET}</code> built by "
        "<code>evalkit.simulate</code> (seeded; the same seed writes the same bytes) into "
        "<code>_default-data/metrics</code> beside these reports; the agreement study simulates "
        "its rater labels; the judge calibration runs a simulated model judge (synthetic: "
        "5 repeats per item, no model called) and the rule judge over the committed gold set "
        "<code>gold/instruction-adherence</code>, and the prevalence study simulates a model "
        "judge over its version v2 and over a target with known class shares. Nothing here is "
        'a real session, a real rater or a real model. See the <a href="#data-card">data '
        "card</a>.</p>\n"
        + _data_card()
        + "\n<h2>Provenance</h2>\n"
        + _provenance(results)
        + "\n<h2>What these reports do not prove</h2>\n"
        f"<ul>{not_proven}</ul>\n</body>\n</html>\n"
    )
