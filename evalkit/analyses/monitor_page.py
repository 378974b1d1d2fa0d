"""The monitor study page: every check's band against session index, its states and its price.

What the notebook ``monitor`` shows of an :class:`~evalkit.analyses.monitor.MonitorReport`:
the states table, the bands of the alarm checks beside the fixed-n Wilson interval with the
first crossings marked, how much wider the band is than Wilson (the price of looking after
every session), and the figures for ``results.json``. Text from the data reaches Markdown and
plots only through :mod:`evalkit.files.escape`. ``docs/MONITOR.md`` holds the construction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from evalkit.analyses.headline import Headline
from evalkit.analyses.monitor import CheckBand, MonitorReport, State
from evalkit.analyses.notes import Note, nothing_to_plot
from evalkit.analyses.page_tables import SUMMARY
from evalkit.extras import require
from evalkit.files.escape import markdown_code, markdown_text, plot_text

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "DOES_NOT_PROVE",
    "data_text",
    "figures",
    "headline",
    "plot_bands",
    "price_rows",
    "price_text",
    "shown_bands",
    "states_frame",
    "states_text",
    "unmeasured_text",
]

#: The plain statement under every monitor page (also in docs/MONITOR.md).
DOES_NOT_PROVE: Final = """\
- `broken` says the check's rate is above the ceiling with the band's guarantee (the true
  rate, if it is one constant rate, leaves the band at some session with probability at most
  alpha); it does not say why. HR-101's answer is to re-aim the instrument, not to obey or
  silence it.
- `quiet` says the rate is below the floor; a check that genuinely never fires and one that is
  silently broken look the same from here (HR-105). Only a test that makes it fire (a
  synthetic record) tells them apart.
- `within` and `undecided` prove nothing is wrong: an undecided band is too wide to say.
- The guarantee is for one check. The page watches many checks at once; the chance that some
  band somewhere misses its rate is larger than alpha (no correction is made across checks).
- A rate that changes over time is not one rate: the band then covers a running average, and
  a judge or instrument that changed shows as a band moving, not as the moment it changed.
- The figures are about the data named on the data card, and nothing else; the preset's
  (docs/DATA_CARD.md) describe the simulator's sessions, not any real repository.
"""


def data_text(report: MonitorReport) -> str:
    """What was read: source, sessions per rubric, re-scores, skipped lines, notes."""
    per = ", ".join(f"{markdown_code(r)}: {n} {report.unit}" for r, n in report.sessions.items())
    parts = [
        f"Read from the {markdown_text(report.source)} {markdown_code(report.name)}: "
        f"{per or 'nothing'}."
    ]
    if report.repeat_records:
        parts.append(
            f"{report.repeat_records} record(s) re-scored a session already counted under its "
            "rubric; each session counts once (its first record), so the outcomes stay the ones "
            "a reader saw as the journal grew."
        )
    if report.skipped_lines:
        parts.append(
            f"{len(report.skipped_lines)} journal line(s) are not valid records (skipped)."
        )
    parts += [markdown_text(n) for n in report.notes]
    parts.append(
        f"Band: anytime-valid {100 * (1 - report.alpha):g}% confidence sequence, tightest around "
        f"{report.optimize_at:g} {report.unit}; `broken` above the ceiling "
        f"{100 * report.ceiling:g}%, `quiet` below the floor {100 * report.floor:g}%."
    )
    return "\n\n".join(parts)


def states_frame(report: MonitorReport) -> pd.DataFrame:
    """One row per check: n of sessions, fires, unmeasured, rate, band, fixed-n, state, since
    (the causes of the unmeasured: :func:`unmeasured_text`)."""
    import pandas as pd

    def pct(x: float | None) -> str:
        return "—" if x is None else f"{100 * x:.1f}%"

    rows = []
    for b in report.bands:
        low, high = b.interval
        f_low, f_high = b.fixed_n
        rows.append(
            {
                "check": b.check.label,
                "role": "alarm" if b.check.alarm else "share",
                "n / sessions": f"{b.n} / {b.sessions}",
                "fires": b.fires,
                "unmeasured": b.unmeasured.count,
                "rate": pct(b.rate),
                "anytime-valid band": "—" if low is None else f"[{pct(low)}, {pct(high)}]",
                "fixed-n Wilson": "—" if f_low is None else f"[{pct(f_low)}, {pct(f_high)}]",
                "state": b.state.value,
                "since session": "" if b.state_at is None else str(b.state_at),
            }
        )
    out = pd.DataFrame(rows).set_index("check")
    # the summary row counts the alarms' states: a share's state is reported, never an alarm
    alarms = out[out["role"] == "alarm"]["state"].value_counts()
    states = ", ".join(f"{n} {s}" for s, n in alarms.items()) or "none"
    shares = int((out["role"] != "alarm").sum())
    out.attrs[SUMMARY] = f"{len(out)} checks: alarm checks {states}; {shares} shares (no alarm)"
    return out


def unmeasured_text(report: MonitorReport) -> str:
    """Each cause of an unmeasured session once, with the checks it took out of their rates
    (Markdown; one line per cause, a dimension named once for all its statuses)."""
    by_cause: dict[str, dict[str, tuple[int, int]]] = {}
    for b in report.bands:
        # a dimension's or the rule judge's statuses share their sessions: named once
        per_status = b.check.kind == "dimension" or b.check.name.startswith("rule judge: ")
        subject = b.check.label.rsplit(": ", 1)[0] if per_status else b.check.label
        for reason, n in b.unmeasured.reasons:
            by_cause.setdefault(reason, {}).setdefault(subject, (n, b.sessions))
    if not by_cause:
        return f"Every check was measured on every one of its {report.unit}."
    lines = [f"Unmeasured {report.unit}, by cause (left out of each check's n, never a zero):"]
    for reason, checks in by_cause.items():
        named = ", ".join(f"{markdown_text(c)} ({n} of {t})" for c, (n, t) in checks.items())
        lines.append(f"- *{markdown_text(reason)}*: {named}.")
    return "\n".join(lines)


def states_text(report: MonitorReport) -> str:
    """The alarm checks that are broken or quiet, with when; or that none is."""
    broken = report.broken_alarms
    quiet = [b for b in report.bands if b.check.alarm and b.state is State.QUIET]
    lines = []
    for b in broken:
        lines.append(
            f"- **broken**: {markdown_text(b.check.label)} since session {b.state_at} "
            f"({markdown_code(b.state_session or '')}); {b.fires} of {b.n} fired."
        )
    for b in quiet:
        lines.append(f"- **quiet**: {markdown_text(b.check.label)} since session {b.state_at}.")
    if not lines:
        return (
            "No alarm check is broken or quiet: every band still reaches the ceiling or the floor."
        )
    return "\n".join(lines)


def shown_bands(report: MonitorReport, limit: int = 12) -> list[CheckBand]:
    """The alarm checks worth a panel: decided ones first, then those that fired, at most
    ``limit`` (the states table lists every check)."""
    alarms = [b for b in report.bands if b.check.alarm and b.n > 0]
    decided = [b for b in alarms if b.state is not State.UNDECIDED]
    fired = [b for b in alarms if b.state is State.UNDECIDED and b.fires > 0]
    return (decided + fired)[:limit]


def plot_bands(report: MonitorReport, limit: int = 12) -> Figure | Note:
    """Small multiples: each shown check's band and Wilson's against session index; a
    sentence instead when no alarm check reached a state or fired (no empty axes)."""
    require("matplotlib", purpose="the monitor page's plots")
    bands = shown_bands(report, limit)
    if not bands:
        return nothing_to_plot(
            "the bands of the alarm checks",
            "no alarm check reached a state or fired on a measured session; the table below "
            "lists every check",
        )
    import matplotlib.pyplot as plt

    cols = 3
    rows = max(1, -(-len(bands) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 2.8 * rows), squeeze=False)
    for ax in axes.flat[len(bands) :]:
        ax.axis("off")
    for ax, b in zip(axes.flat, bands, strict=False):
        x = b.session_of
        est = b.band.estimate
        w_low, w_high = _wilson_path(b)
        ax.fill_between(x, b.band.lower, b.band.upper, step="post", alpha=0.3, label="anytime band")
        ax.step(x, w_low, where="post", color="0.35", lw=0.8, ls="--", label="fixed-n Wilson")
        ax.step(x, w_high, where="post", color="0.35", lw=0.8, ls="--")
        ax.step(x, est, where="post", color="C0", lw=1.2, label="running rate")
        ax.axhline(b.ceiling, color="C3", lw=0.8, label="ceiling")
        if b.floor > 0:
            ax.axhline(b.floor, color="C2", lw=0.8, label="floor")
        if b.state_at is not None:
            ax.axvline(b.state_at, color="k", lw=0.8, ls=":")
            ax.annotate(
                f"{b.state.value} at {b.state_at}",
                (b.state_at, 0.97),
                xycoords=("data", "axes fraction"),
                fontsize=7,
                va="top",
            )
        ax.set_ylim(0, 1)
        ax.set_xlim(0.5, max(b.sessions, 1) + 0.5)
        ax.set_title(plot_text(b.check.label), fontsize=8)
        ax.tick_params(labelsize=7)
    axes.flat[0].legend(fontsize=6, loc="upper right")
    fig.supxlabel(f"{report.unit[:-1]} (in the journal's order)", fontsize=9)
    fig.supylabel("fire rate", fontsize=9)
    fig.tight_layout()
    plt.close(fig)  # shown once, by display(), not again by the inline backend
    return fig


def _wilson_path(b: CheckBand) -> tuple[np.ndarray, np.ndarray]:
    """The fixed-n Wilson interval after each measured session (what peeking would read)."""
    from evalkit.stats.distributions import normal_isf

    n = np.arange(1, b.n + 1, dtype=float)
    p = b.band.fires / n
    z = float(normal_isf(b.band.alpha / 2))
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def price_rows(report: MonitorReport) -> list[dict[str, Any]]:
    """Per measured check: the band's width over the fixed-n Wilson width at its last session."""
    rows = []
    for b in report.bands:
        low, high = b.interval
        f_low, f_high = b.fixed_n
        if low is None or high is None or f_low is None or f_high is None or f_high <= f_low:
            continue
        rows.append({"check": b.check.label, "n": b.n, "ratio": (high - low) / (f_high - f_low)})
    return rows


def price_text(report: MonitorReport) -> str:
    """The price in plain words: how much wider the band is than a fixed-n interval."""
    rows = price_rows(report)
    if not rows:
        return "No check was measured: there is no band to price."
    ratios = [r["ratio"] for r in rows]
    n_values = sorted({r["n"] for r in rows})
    n_text = f"n = {n_values[0]}" if len(n_values) == 1 else f"n = {n_values[0]}–{n_values[-1]}"
    return (
        f"At the last session the anytime-valid band is {min(ratios):.2f}–{max(ratios):.2f} "
        f"times as wide as the fixed-n Wilson interval on the same counts ({n_text}); at 400 "
        f"sessions and a 10% rate it is {_ratio_at(40, 400, report):.2f} times as wide. That "
        "is the price of reading the rate after every session: a Wilson interval read that "
        "way is no 95% interval any more (docs/MONITOR.md has the seeded simulation: false "
        "`broken` alarms of the band and of Wilson peeking, at a true rate of exactly 10%)."
    )


def _ratio_at(k: int, n: int, report: MonitorReport) -> float:
    from evalkit.stats import confidence_sequence, wilson_interval

    band = confidence_sequence(
        [True] * k + [False] * (n - k), alpha=report.alpha, optimize_at=report.optimize_at
    ).interval()
    fixed = wilson_interval(k, n, 1 - report.alpha)
    assert band.low is not None and band.high is not None
    assert fixed.low is not None and fixed.high is not None
    return (band.high - band.low) / (fixed.high - fixed.low)


def figures(report: MonitorReport) -> dict[str, Any]:
    """The machine-readable figures of the page (``results.json``)."""
    data = report.to_dict()
    return {
        "monitor": {k: v for k, v in data.items() if k != "checks"},
        "checks": data["checks"],
        "broken": [
            {"check": b.check.label, "since_session": b.state_at, "session_id": b.state_session}
            for b in report.broken_alarms
        ],
        "price": price_rows(report),
    }


# ------------------------------------------------------------------------ the landing headline


def headline(res: Mapping[str, Any]) -> Headline:
    """The monitor's headline from its results: how many alarm checks are broken; since when,
    and what an anytime-valid band licenses, one click away."""
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
    return Headline(
        text,
        tuple(details),
        figure=f"{len(broken)} broken",
    )
