"""The landing page ``reports/index.html`` that ``evalkit demo`` writes over the study pages.

One self-contained, offline page (inline CSS, no script, no external reference): per study its
status, a one-line headline figure with its CI and n read from the study's ``results.json``, the
parameters it ran with, and the provenance (git commit, evalkit version, the default data and
their data card) plus what these reports do not prove. The same inputs give the same bytes: no
clock, no timing, no absolute path of the output directory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from evalkit.analyses._results import fmt_estimate
from evalkit.files.escape import html_text
from evalkit.finite import finite_float
from evalkit.provenance.repository import REPO_ROOT

__all__ = ["Headline", "headline", "render_index"]

DATA_CARD = REPO_ROOT / "docs" / "DATA_CARD.md"
PRESET = "rubric-v2-2026-09-19"


@dataclass(frozen=True)
class Headline:
    """A study's headline figure (one line) and the short lines that qualify it."""

    text: str
    details: tuple[str, ...] = ()
    advisory: str | None = None


# --------------------------------------------------------------------------------- headlines


def _pct_ci(rate: Any, low: Any, high: Any, n: Any) -> str:
    return fmt_estimate(
        finite_float(rate), (finite_float(low), finite_float(high)), n, percent=True
    )


def _threshold(res: Mapping[str, Any]) -> Headline:
    st = res["threshold_study"]
    by_t = {row["threshold"]: row for row in st["thresholds"]}
    cf = [row for row in res["counterfactual"] if row["threshold"] in by_t]
    if not cf:
        return Headline("no candidate threshold was evaluated")
    n, clusters, ceiling = st["n_items"], st["n_clusters"], st["ceiling"]
    not_above = [row for row in cf if by_t[row["threshold"]]["ceiling_status"] != "above"]
    pick = min(not_above, key=lambda r: r["threshold"]) if not_above else cf[-1]
    row = by_t[pick["threshold"]]
    why = (
        f"the lowest candidate whose interval is not wholly above the {100 * ceiling:.0f}% ceiling"
        if not_above
        else f"every candidate's interval lies wholly above the {100 * ceiling:.0f}% ceiling; "
        "the largest is shown"
    )
    rate = (
        _pct_ci(row["fire_rate"], None, None, 1)  # "(n = 1, no CI)"
        if n == 1
        else _pct_ci(row["fire_rate"], row["ci_low"], row["ci_high"], None)
        + ", cluster-bootstrap 95% CI"
    )
    text = (
        f"threshold {pick['threshold']} fires on {pick['records_firing']} of {n} "
        f"record{'s' if n != 1 else ''} ({rate}), {pick['sessions_failing']} of {clusters} "
        f"session{'s' if clusters != 1 else ''} fail; n = {n} records / {clusters} sessions"
    )
    others = "; ".join(
        f"t = {r['threshold']}: {r['records_firing']} records, {r['sessions_failing']} sessions"
        for r in cf
    )
    details = [f"Threshold shown: {why} (ceiling check: {row['ceiling_status']}).",
               f"Counterfactual table ({res.get('fact', 'fact')} ≥ t): {others}."]  # fmt: skip
    pub = res.get("published_table")
    if pub:
        details.append(
            f"Journal read: {pub['records']} records over {pub['sessions']} sessions; rubric-v1 "
            f"process-safety failed {pub['v1_fail_records']} records "
            f"({pub['v1_fail_sessions']} sessions)."
        )
    if st.get("n_unknown"):
        details.append(f"Records with an unknown value (not counted as 0): {st['n_unknown']}.")
    return Headline(text, tuple(details))


def _calibration(res: Mapping[str, Any]) -> Headline:
    k = res["kappa"]
    ci = k.get("ci") or {}
    est = fmt_estimate(
        finite_float(k.get("statistic")),
        (finite_float(ci.get("low")), finite_float(ci.get("high"))),
        k.get("n"),
    )
    graduates = bool(res.get("graduates"))
    registered = bool(res.get("registered"))
    verdict = (
        "graduates under the pre-registered rule"
        if graduates
        else "does not graduate under the pre-registered rule"
    )
    reps = res.get("consistency")
    if isinstance(reps, Mapping):  # a model judge: n counts calls, over items
        est = (
            fmt_estimate(
                finite_float(k.get("statistic")),
                (finite_float(ci.get("low")), finite_float(ci.get("high"))),
                None,
            )
            + f", n = {k.get('n')} labelled calls over {reps.get('n_items')} items"
        )
    text = f"Cohen's κ (judge vs gold) {est} — {verdict}"
    details = _model_judge_details(res)
    cal = res.get("calibration") or {}
    if cal.get("graduation_reason"):
        details.append(f"Decision: {cal['graduation_reason']}.")
    if res.get("matches_preregistered_ci") is False:
        details.append(
            "This run's bootstrap differs from the pre-registered one, so the decision shown is "
            "not the pre-registered decision."
        )
    if graduates and registered:
        advisory = None
        details.append(f"Registered as {res.get('calibration_status')}.")
    elif graduates:
        advisory = (
            "Advisory: the calibration graduates but is not registered (evalkit calibrate "
            "registers it); until then judge dimensions stay uncalibrated."
        )
    else:
        advisory = "Advisory: not graduated; judge dimensions stay uncalibrated."
    return Headline(text, tuple(details), advisory)


def _est(e: Any, percent: bool = False) -> str:
    e = e if isinstance(e, Mapping) else {}
    ci = e.get("ci") or {}
    return fmt_estimate(
        finite_float(e.get("statistic")),
        (finite_float(ci.get("low")), finite_float(ci.get("high"))),
        e.get("n"),
        percent=percent,
    )


def _model_judge_details(res: Mapping[str, Any]) -> list[str]:
    """The model judge's consistency beside its κ, and the rule judge's κ (the judge-calibration
    study with repeats); nothing for results without them."""
    out: list[str] = []
    data, reps = res.get("data") or {}, res.get("consistency")
    if isinstance(reps, Mapping):
        who = str((res.get("calibration") or {}).get("judge", "the model judge"))
        synthetic = " — synthetic data, simulated, no model called" if data.get("synthetic") else ""
        out.append(
            f"{who}{synthetic}: K = {reps.get('repeats')} repeats per item; κ on every labelled "
            f"call above, on the majority label {_est(reps.get('kappa_majority'))} "
            f"({len(reps.get('majority_ties') or [])} ties left out); Fleiss κ across repeats "
            f"{_est(reps.get('repeat_kappa'))}; flip rate {_est(reps.get('flip_rate'), True)}; "
            f"calls without a label {_est(reps.get('failed_calls'), True)}."
        )
    rule = res.get("rule_judge")
    if isinstance(rule, Mapping):
        verdict = "graduates" if rule.get("graduates") else "does not graduate"
        out.append(
            f"Rule judge (deterministic, beside it): Cohen's κ {_est(rule.get('kappa'))} — "
            f"{verdict}."
        )
    return out


def _agreement(res: Mapping[str, Any]) -> Headline:
    rows = [r for r in res["per_target"] if r.get("coefficient") == "Fleiss κ"]
    defined = [r for r in rows if finite_float(r.get("estimate")) is not None]
    undefined = sorted(r["target"] for r in rows if finite_float(r.get("estimate")) is None)

    def one(r: Mapping[str, Any]) -> str:
        return fmt_estimate(
            finite_float(r["estimate"]),
            (finite_float(r["ci_low"]), finite_float(r["ci_high"])),
            None,
        )

    raters = sorted({r["n_raters"] for r in rows})
    items = sorted({r["n_items"] for r in rows})
    n_text = (
        f"n = {items[0]} items × {raters[0]} raters per target"
        if len(items) == 1 and len(raters) == 1
        else f"n = {'/'.join(map(str, items))} items per target"
    )
    if not defined:
        text = f"Fleiss κ undefined for every target (labels never vary); {n_text}"
    elif len(defined) == 1:
        r = defined[0]
        text = f"Fleiss κ {one(r)} ({r['target']}), bootstrap 95% CI; {n_text}"
    else:
        lo = min(defined, key=lambda r: r["estimate"])
        hi = max(defined, key=lambda r: r["estimate"])
        text = (
            f"Fleiss κ per target from {one(lo)} ({lo['target']}) to {one(hi)} "
            f"({hi['target']}), bootstrap 95% CIs, over {len(defined)} targets; {n_text}"
        )
    details = []
    if undefined:
        details.append(
            "κ undefined (labels never vary — no variance, not perfect agreement): "
            + ", ".join(undefined)
            + "."
        )
    paradox = [
        p["target"]
        for p in res.get("paradox") or []
        if str(p.get("diagnosis", "")).startswith("paradox")
    ]
    if paradox:
        details.append(
            "κ paradox (high observed agreement, low κ; read AC1/PABAK beside κ): "
            + ", ".join(sorted(paradox))
            + "."
        )
    return Headline(text, tuple(details))


def _replay(res: Mapping[str, Any]) -> Headline:
    flags = res["flags"]
    sessions = res.get("sessions") or {}
    rates = {(r["rubric"], r["dimension"], r["status"]): r for r in res.get("rates") or []}
    per_rubric: dict[str, int] = {}
    for f in flags:
        per_rubric[f["rubric"]] = per_rubric.get(f["rubric"], 0) + 1
    if len(set(sessions.values())) == 1 and len(sessions) > 1:
        n_text = f"n = {next(iter(sessions.values()))} sessions per rubric"
    else:
        n_text = ", ".join(f"{r}: n = {n} sessions" for r, n in sessions.items())
    if flags:
        split = ", ".join(f"{r}: {c}" for r, c in per_rubric.items())
        text = (
            f"{len(flags)} dead-instrument flag{'s' if len(flags) != 1 else ''} ({split}); {n_text}"
        )
    else:
        text = f"no dead-instrument flag; {n_text}"
    details = []
    for f in flags:
        r = rates.get((f["rubric"], f["dimension"], f["status"]))
        figure = (
            f"{r['k']}/{r['n']} = {_pct_ci(r['rate'], r['ci_low'], r['ci_high'], r['n'])}"
            if r
            else str(f.get("detail", ""))
        )
        details.append(
            f"{f['rubric']} {f['dimension']} '{f['status']}': {f['flag']} — {figure} (Wilson 95% CI)"
        )
    if "changed_count" in res:
        details.append(
            f"Session × dimension verdicts that differ between the rubrics: {res['changed_count']}."
        )
    return Headline(text, tuple(details))


def _share(name: str, row: Mapping[str, Any] | None, n_text: str) -> str:
    if row is None or finite_float(row.get("share")) is None:
        return f"{name} undefined"
    ci = (finite_float(row.get("low")), finite_float(row.get("high")))
    return f"{name} {fmt_estimate(finite_float(row['share']), ci, None, percent=True)} ({n_text})"


def _prevalence_line(res: Mapping[str, Any], cls: str) -> str:
    rows = {r["estimator"]: r for r in res["estimates"] if r["class"] == cls}
    n = {name: (row or {}).get("n") for name, row in rows.items()}
    gold = (res.get("corrected") or {}).get("n_gold")
    parts = [
        _share("corrected", rows.get("corrected"), f"n = {n.get('corrected')} target, {gold} gold"),
        _share("naive", rows.get("naive"), f"n = {n.get('naive')} labelled by the judge"),
    ]
    if "PPI++" in rows:
        parts.append(_share("PPI++", rows["PPI++"], f"n = {n.get('PPI++')} human-labelled"))
    truth = finite_float((res.get("truth") or {}).get(cls)) if res.get("synthetic") else None
    if truth is not None:
        parts.append(f"known true share {100 * truth:.1f}% (synthetic)")
    return f"share of {cls!r}: " + "; ".join(parts)


def _prevalence(res: Mapping[str, Any]) -> Headline:
    classes = list(res["classes"])
    lead = "fail" if "fail" in classes else classes[0]
    level = finite_float(res.get("level")) or 0.95
    text = _prevalence_line(res, lead) + f"; {100 * level:g}% intervals"
    details = [_prevalence_line(res, c) + "." for c in classes if c != lead]
    corrected = res.get("corrected") or {}
    advisory = None
    if corrected.get("reason"):
        advisory = f"Corrected shares undefined: {corrected['reason']}."
    details.append(
        "Assumption of the corrected share: the judge's error rates measured on the gold set "
        "hold on the target."
    )
    ppi = res.get("ppi") or {}
    if ppi.get("reason"):
        details.append(f"PPI++ undefined: {ppi['reason']}.")
    if res.get("synthetic"):
        details.append("Synthetic data: a simulated judge over a simulated target (data card).")
    return Headline(text, tuple(details), advisory)


def _monitor(res: Mapping[str, Any]) -> Headline:
    info, broken = res["monitor"], res["broken"]
    sessions = ", ".join(f"{r}: {n} {info['unit']}" for r, n in info["sessions"].items())
    ceiling = 100 * float(info["ceiling"])
    if broken:
        text = (
            f"{len(broken)} alarm check{'s' if len(broken) != 1 else ''} broken "
            f"(anytime-valid band above the {ceiling:g}% ceiling); {sessions}"
        )
    else:
        text = f"no alarm check broken (ceiling {ceiling:g}%); {sessions}"
    details = [f"{b['check']}: broken since session {b['since_session']}." for b in broken]
    details.append(
        f"Anytime-valid {100 * (1 - float(info['alpha'])):g}% bands: they may be read after "
        "every session; a fixed-n interval read that way may not."
    )
    return Headline(text, tuple(details))


_HEADLINES: dict[str, Callable[[Mapping[str, Any]], Headline]] = {
    "threshold-study": _threshold,
    "judge-calibration": _calibration,
    "agreement-study": _agreement,
    "rubric-replay": _replay,
    "prevalence-study": _prevalence,
    "monitor": _monitor,
}


def headline(study: str, results: Mapping[str, Any]) -> Headline | None:
    """The headline of ``study`` from its results, or None when it has none / the keys lack."""
    fn = _HEADLINES.get(study)
    if fn is None or results.get("status") != "ok":
        return None
    try:
        return fn(results)
    except (KeyError, TypeError, ValueError, IndexError):
        return None


# ----------------------------------------------------------------------------------- render

_CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1f2328;
max-width:1000px;margin:2em auto;padding:0 1.2em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:1.8em;
border-bottom:1px solid #d0d7de;padding-bottom:.2em}h3{font-size:1.1em;margin:0}
.study{border:1px solid #d0d7de;border-left-width:6px;border-radius:4px;padding:.8em 1em;
margin:1em 0}.study.ok{border-left-color:#1a7f37}.study.failed{border-left-color:#cf222e}
.badge{display:inline-block;font-weight:bold;font-size:.85em;padding:0 .5em;border-radius:3px;
color:#fff;margin-left:.5em;vertical-align:middle}.badge.ok{background:#1a7f37}
.badge.failed{background:#cf222e}.headline{font-size:1.05em;margin:.4em 0}
.advisory{background:#fff8c5;border:1px solid #d4a72c;padding:.3em .6em;border-radius:3px}
.error{background:#ffebe9;border:1px solid #cf222e;padding:.3em .5em;white-space:pre-wrap;
font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em}
table{border-collapse:collapse;font-size:.88em;margin:.4em 0}
th,td{border:1px solid #d0d7de;padding:.15em .5em;text-align:left;vertical-align:top}
th{background:#f6f8fa}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}
details{margin:.4em 0}summary{cursor:pointer}ul.details{margin:.3em 0;padding-left:1.3em}
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
        "<details open><summary>Parameters</summary><table><tr><th>parameter</th><th>value</th>"
        f"<th>meaning (declared in the notebook)</th></tr>{rows}</table></details>"
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
        _prereg_line(res),
    ]
    head = headline(name, res) if status == "ok" else None
    if head is not None:
        parts.append(f'<p class="headline">{html_text(head.text)}</p>')
        if head.advisory:
            parts.append(f'<p class="advisory">{html_text(head.advisory)}</p>')
        if head.details:
            parts.append(
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
    parts.append(_parameters_table(name, res.get("parameters") or {}, out_dir))
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
        commit += " (working tree had uncommitted changes)"
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
        "<h2>Studies</h2>\n" + "\n".join(sections) + "\n"
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
