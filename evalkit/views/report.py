"""The one-record HTML report: a rebuildable view of one journal record.

A single self-contained file: inline CSS, no script, no font, no image, no link to anything,
so opening it makes no request at all. Every piece of record content goes through
:func:`evalkit.files.escape.html_text` (the one escape helper of every page). The output is a
pure function of the record (and the metrics directory named in the re-verify command): no
clock, no environment, so the same record renders to the same bytes. What the explorer's record
page shows the same way (the provenance fields, how a value reads, the judge's advisory note,
the re-verify command) is defined here once and used by both.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.files.escape import html_text
from evalkit.record.contract import (
    KPI_KEYS,
    UNCALIBRATED,
    Method,
    normalize_record,
    validate_record,
)

if TYPE_CHECKING:
    from evalkit.record.calibration_status import CalibrationAcceptance

__all__ = [
    "JUDGE_ADVISORY",
    "NOT_RECORDED",
    "RECORD_FIELDS",
    "display_value",
    "field_value",
    "render_report",
    "verify_command",
    "write_report",
]

NOT_RECORDED = "not recorded"

#: The record's identity, versions, provenance, model and harness, as (label, path) in the
#: order a page lists them (after ``run_id`` and ``session_id``).
RECORD_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("timestamp (evaluation)", ("timestamp",)),
    ("rubric_version", ("rubric_version",)),
    ("provenance.rubric_sha256", ("provenance", "rubric_sha256")),
    ("provenance.engine_commit", ("provenance", "engine_commit")),
    ("standard_version", ("standard_version",)),
    ("schema_version", ("schema_version",)),
    ("model.id", ("model", "id")),
    ("model.source", ("model", "source")),
    ("harness.plugin_version", ("harness", "plugin_version")),
    ("harness.platform", ("harness", "platform")),
    ("harness.host_class", ("harness", "host_class")),
    ("harness.hostname_hash", ("harness", "hostname_hash")),
    ("handle", ("handle",)),
    ("anonymized", ("anonymized",)),
)

#: Why a judge dimension's verdict carries no weight (said beside every judge table).
JUDGE_ADVISORY = (
    "These verdicts come from a judge, not from a deterministic check. They are not part "
    "of the evaluation above, carry no weight, and are not re-verified. Discarding them "
    "leaves the deterministic evaluation complete."
)

_CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 60rem;
       padding: 0 1rem; color: #1d2430; background: #ffffff; line-height: 1.45; }
h1 { font-size: 1.5rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 2px solid #d5dbe3; }
.sub { color: #4a5568; margin-top: 0; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0; }
th, td { text-align: left; vertical-align: top; padding: 0.35rem 0.5rem;
         border-bottom: 1px solid #e2e8f0; }
th { background: #f1f4f8; font-weight: 600; }
td.key { width: 14rem; color: #4a5568; }
code, pre { font-family: ui-monospace, monospace; font-size: 0.9em; }
pre { background: #f1f4f8; padding: 0.6rem; overflow-x: auto; white-space: pre-wrap; }
.missing { color: #8a94a6; font-style: italic; }
.status { display: inline-block; padding: 0.05rem 0.5rem; border-radius: 0.6rem;
          font-weight: 600; white-space: nowrap; }
.status-pass { background: #d8f3dc; color: #1b5e20; }
.status-fail { background: #fde2e1; color: #8c1d18; }
.status-not-applicable { background: #e9ecef; color: #495057; }
.status-cannot-determine { background: #fff3cd; color: #7a5b00; }
.evidence { white-space: pre-wrap; word-break: break-word; }
section.judge { border: 2px dashed #b08900; background: #fffbea; padding: 0 1rem 1rem;
                margin-top: 2rem; }
section.judge h2 { border-bottom-color: #e0c36a; }
.certificate { font-size: 0.85em; color: #4a5568; }
.label { font-weight: 700; color: #7a5b00; text-transform: uppercase; letter-spacing: 0.04em; }
section.limits { background: #f7f7fb; padding: 0 1rem 1rem; margin-top: 2rem; }
"""


def _e(value: Any) -> str:
    return html_text(value)


def display_value(value: Any) -> str:
    """A record value as a person reads it: null is "not recorded", never 0 or a blank."""
    if value is None:
        return NOT_RECORDED
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON/JS prints 5400, not 5400.0
    return str(value)


def field_value(rec: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The value at ``path`` of a validated record (one of :data:`RECORD_FIELDS`)."""
    value: Any = rec
    for key in path:
        value = value[key]
    return value


def _value(value: Any) -> str:
    """Render a record value as HTML (:func:`display_value`, the missing one marked)."""
    if value is None:
        return f'<span class="missing">{NOT_RECORDED}</span>'
    return _e(display_value(value))


def _rows(pairs: list[tuple[str, Any]]) -> str:
    return "\n".join(
        f'<tr><td class="key">{_e(key)}</td><td>{_value(value)}</td></tr>' for key, value in pairs
    )


def _status(status: Any) -> str:
    return f'<span class="status status-{_e(status)}">{_e(status)}</span>'


def _score(dim: Mapping[str, Any]) -> str:
    if "score" not in dim:
        return '<span class="missing">no score</span>'
    return _value(dim["score"])


def _calibration(dim: Mapping[str, Any]) -> str:
    """The calibration cell of a judge dimension.

    A status other than ``uncalibrated`` only reaches here after validation against verified
    certificates, so it names its certificate.
    """
    status = dim.get("calibration_status")
    if status == UNCALIBRATED:
        return html_text(status)
    return (
        f'{html_text(status)}<br><span class="certificate">verified calibration certificate '
        f"<code>calibrations/{html_text(dim.get('calibration_ref'))}.json</code></span>"
    )


def _dimension_table(dims: list[Mapping[str, Any]], *, judge: bool) -> str:
    extra_head = "<th>calibration</th>" if judge else ""
    rows = []
    for dim in dims:
        extra = f"<td>{_calibration(dim)}</td>" if judge else ""
        rows.append(
            f"<tr><td><code>{_e(dim.get('id'))}</code></td><td>{_status(dim.get('status'))}</td>"
            f"<td>{_score(dim)}</td>{extra}"
            f'<td class="evidence">{_e(dim.get("evidence", ""))}</td></tr>'
        )
    return (
        "<table><thead><tr><th>dimension</th><th>status</th><th>score</th>"
        f"{extra_head}<th>evidence</th></tr></thead><tbody>\n"
        + "\n".join(rows)
        + "\n</tbody></table>"
    )


def verify_command(run_id: str, metrics_dir: str | os.PathLike[str] | None) -> str:
    """The shell command that re-verifies the record ``run_id`` (arguments quoted)."""
    directory = os.fspath(metrics_dir) if metrics_dir is not None else ".orchestrator/metrics"
    return f"evalkit verify {shlex.quote(run_id)} --metrics-dir {shlex.quote(directory)}"


def _provenance_rows(rec: Mapping[str, Any]) -> str:
    """Identity, versions, provenance, model and harness of the record, as table rows."""
    return _rows(
        [("run_id", rec["run_id"]), ("session_id", rec["session_id"])]
        + [(label, field_value(rec, path)) for label, path in RECORD_FIELDS]
    )


def _judge_body(judges: list[Mapping[str, Any]], calibration_label: str) -> str:
    """The advisory judge section: its label, why it carries no weight, its table."""
    if judges:
        judge_body = (
            f'<p><span class="label">advisory · {_e(calibration_label)}</span> '
            f"{_e(JUDGE_ADVISORY)}</p>\n" + _dimension_table(judges, judge=True)
        )
    else:
        judge_body = (
            '<p><span class="label">advisory · uncalibrated</span> '
            "This record carries no judge dimension.</p>"
        )
    return judge_body


def _limits(all_uncalibrated: bool, model_source: Any) -> list[str]:
    """What this report does not prove, as HTML list items."""
    return [
        "<strong>n = 1, no confidence interval.</strong> This is one session scored once. It "
        "says nothing about how often this outcome occurs across sessions; no rate or "
        "comparison can be read from it.",
        "<strong>The judge is uncalibrated.</strong> Judge dimensions have not been checked "
        "against a frozen gold set; they are advisory and may be wrong."
        if all_uncalibrated
        else "<strong>The judge is advisory.</strong> A calibration against a frozen gold set "
        "bounds its agreement on that set only, with the uncertainty of that study; it does "
        "not make a single verdict here correct. Its certificate was re-checked offline (gold "
        "set, decision rule and labels by sha256, the labels re-scored under the rule).",
        "<strong>Self-evaluation.</strong> The session's own harness wrote the ledger this "
        f"record is scored from, and the model id was taken from <code>{_e(model_source)}"
        "</code>. No independent observer checked either.",
        "<strong>Replay is not deterministic model output.</strong> Re-verifying recomputes the "
        "verdicts from the stored ledger; it does not re-run the model, and re-running the "
        "session would not reproduce the same work.",
        "<strong>No global score.</strong> Each dimension is a separate verdict; they are not "
        "meant to be added or averaged.",
    ]


def render_report(
    record: Mapping[str, Any],
    *,
    metrics_dir: str | os.PathLike[str] | None = None,
    accepted: CalibrationAcceptance | None = None,
) -> str:
    """Render one record as a self-contained HTML document (a string).

    The record is normalized and validated first (``ValidationError`` when it breaks the
    contract), against ``accepted`` (the verified calibration certificates; default:
    ``uncalibrated`` only), so a judge is shown as calibrated only when a verified certificate
    holds its status and reference. ``metrics_dir`` only appears in the re-verify command.
    """
    rec = validate_record(normalize_record(record), accepted=accepted)
    dims = rec["dimensions"]
    deterministic = [d for d in dims if d["method"] == Method.DETERMINISTIC]
    judges = [d for d in dims if d["method"] == Method.JUDGE]
    provenance_rows = _provenance_rows(rec)
    kpi_rows = _rows([(key, rec["kpis"][key]) for key in KPI_KEYS])

    all_uncalibrated = all(d.get("calibration_status") == UNCALIBRATED for d in judges)
    calibration_label = "uncalibrated" if all_uncalibrated else "calibration per dimension"
    judge_body = _judge_body(judges, calibration_label)
    limits = _limits(all_uncalibrated, rec["model"]["source"])
    limit_items = "\n".join(f"<li>{item}</li>" for item in limits)

    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Session evaluation: {_e(rec["session_id"])}</title>
<style>{_CSS}</style>
</head>
<body>
<header>
<h1>Session evaluation: <code>{_e(rec["session_id"])}</code></h1>
<p class="sub">run <code>{_e(rec["run_id"])}</code> · {_e(rec["rubric_version"])} ·
{_e(rec["standard_version"])} · self-evaluation</p>
</header>
<main>
<section id="provenance">
<h2>Provenance</h2>
<table><tbody>
{provenance_rows}
</tbody></table>
</section>
<section id="kpis">
<h2>KPIs (reported, not graded)</h2>
<table><tbody>
{kpi_rows}
</tbody></table>
</section>
<section id="dimensions">
<h2>Deterministic dimensions</h2>
{_dimension_table(deterministic, judge=False)}
</section>
<section id="judge" class="judge">
<h2>Judge dimensions (advisory, {_e(calibration_label)})</h2>
{judge_body}
</section>
<section id="verify">
<h2>Re-verify</h2>
<p>Re-score this record offline from the same ledger and compare it dimension by dimension:</p>
<pre>{_e(verify_command(rec["run_id"], metrics_dir))}</pre>
</section>
<section id="limits" class="limits">
<h2>What this does not prove</h2>
<ul>
{limit_items}
</ul>
</section>
</main>
</body>
</html>
"""


def write_report(
    record: Mapping[str, Any],
    out: str | os.PathLike[str],
    *,
    metrics_dir: str | os.PathLike[str] | None = None,
    accepted: CalibrationAcceptance | None = None,
) -> Path:
    """Render ``record`` and write it to ``out`` (UTF-8); return the path."""
    path = Path(out)
    page = render_report(record, metrics_dir=metrics_dir, accepted=accepted)
    path.write_text(page, encoding="utf-8")
    return path
