"""The data card at the top of every study page: which data this run used, and what they hold.

For a metrics directory (:func:`ledger_card`): the path as the page shows paths (its last two
parts), the sha256 of its content (the same record results.json's ``inputs`` holds), sessions
and their date range, the journal's records by rubric version, the rubrics the page scored,
and what ``events.jsonl`` holds by event type, with what is missing said plainly (no gate
telemetry, no guard event). "Synthetic preset" appears only when the ledger files are byte for
byte what :func:`evalkit.simulate.build_preset` writes. For label files (:func:`files_card`):
each input's path, sha256 and size, or the study's simulated default. See docs/DATA_CARD.md.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from evalkit.analyses.measurability import LedgerProfile, ledger_profile
from evalkit.files.escape import markdown_code, markdown_text
from evalkit.journal.reader import JOURNAL_NAME
from evalkit.studies.lock import content_sha256

__all__ = ["DataCard", "files_card", "fleet_card", "ledger_card", "preset_of", "shown_path"]

_LEDGER_FILES = ("sessions.jsonl", "events.jsonl")


def shown_path(path: object) -> str:
    """A path as pages show it: its last two parts (no machine path on a page)."""
    return "…/" + "/".join(PurePath(str(path)).parts[-2:])


def _ledger_digests(root: Path) -> dict[str, str]:
    """sha256 of every ledger file below ``root`` (sessions, events, rotated archives)."""
    from evalkit.files.hashing import file_digest
    from evalkit.ledger.reader import ARCHIVE_DIR_NAME, ARCHIVE_NAME_RE

    names = [n for n in _LEDGER_FILES if (root / n).is_file()]
    archive = root / ARCHIVE_DIR_NAME
    if archive.is_dir():
        names += [
            f"{ARCHIVE_DIR_NAME}/{n}"
            for n in sorted(os.listdir(archive))
            if ARCHIVE_NAME_RE.match(n)
        ]
    return {n: file_digest(root / n, "ledger file")[0] for n in names}


def preset_of(metrics_dir: str | os.PathLike[str]) -> str | None:
    """The preset whose ledger files ``metrics_dir`` holds byte for byte, else ``None``.

    Content, not a marker: the preset is rebuilt (without scoring: a few hundredths of a
    second) and every ledger file compared; the journal is not compared (evalkit wrote it).
    """
    from evalkit.simulate import PRESETS, build_preset

    mine = _ledger_digests(Path(metrics_dir))
    if not mine:
        return None
    for name in PRESETS:
        with tempfile.TemporaryDirectory(prefix="evalkit-preset-check-") as tmp:
            built = build_preset(Path(tmp) / "metrics", name, score=False)
            if _ledger_digests(Path(built.metrics_dir)) == mine:
                return name
    return None


@dataclass(frozen=True)
class DataCard:
    """What one study page ran on; :meth:`markdown` for the page, :meth:`to_dict` for results."""

    source: str
    sha256: str | None
    profile: LedgerProfile | None = None
    preset: str | None = None
    journal: Mapping[str, int] | None = None
    journal_sessions: int | None = None
    scored: tuple[str, ...] = ()
    items: tuple[Mapping[str, Any], ...] = field(default=())
    #: whether a ``sessions.jsonl`` was there (a journal alone has no ledger to profile)
    has_ledger: bool = True

    @property
    def synthetic(self) -> bool:
        """Whether the data are the synthetic preset (shown so on the page)."""
        return self.preset is not None

    def markdown(self) -> str:
        """The card as Markdown (every piece from the data escaped)."""
        lines = ["**Data card.** What this page ran on; every figure below is about these data."]
        if self.profile is None:
            lines += [f"- {item['text']}" for item in self.items]
            return "\n".join(lines)
        p = self.profile
        if self.preset is not None:
            what = (
                f"the **synthetic** preset {markdown_code(self.preset)} (see `docs/DATA_CARD.md`): "
                "its ledger files are byte for byte those `evalkit.simulate.build_preset` writes. "
                "It reproduces published counts, not the sessions behind them"
            )
        else:
            what = f"the metrics directory {markdown_text(self.source)} (not a preset)"
        lines.append(f"- Data: {what}.")
        if self.sha256:
            lines.append(
                f"- Content sha256: {markdown_code(self.sha256)} (every file below the directory)."
            )
        span = (
            f", from {p.first_start[:10]} to {p.last_end[:10]} (UTC)"
            if p.first_start and p.last_end
            else ", dates unknown"
        )
        if self.has_ledger:
            lines.append(f"- Sessions (canonical reading of `sessions.jsonl`): {p.sessions}{span}.")
        if self.journal is None:
            lines.append(f"- Journal: no `{JOURNAL_NAME}`.")
        else:
            versions = ", ".join(f"{markdown_code(v)} {n}" for v, n in self.journal.items())
            total = sum(self.journal.values())
            lines.append(
                f"- Journal `{JOURNAL_NAME}`: {total} records over {self.journal_sessions} "
                f"sessions; rubric versions: {versions or 'none'}."
            )
        if self.scored:
            lines.append(
                "- Scored on this page under: " + ", ".join(markdown_code(r) for r in self.scored)
            )
        if self.has_ledger:
            lines.append(
                f"- `events.jsonl` holds: {markdown_text(p.events_text())}{self._missing()}."
            )
        else:
            lines.append(
                "- Ledger: no `sessions.jsonl` beside the journal; only the records were read, "
                "and what each measured rests on its own evidence."
            )
        return "\n".join(lines)

    def _missing(self) -> str:
        p = self.profile
        assert p is not None
        if p.events == 0:
            return ": no event-derived signal is measured (see the flags)"
        gaps = []
        if not p.has_gate_telemetry:
            gaps.append("no quality_gate event: no gate telemetry")
        if not p.guard_events:
            gaps.append("no destructive-guard or loop-warning event")
        return f" ({'; '.join(gaps)})" if gaps else ""

    def attach(self, figures: Mapping[str, Any]) -> dict[str, Any]:
        """A page's figures with this card as their ``data_card`` (for ``write_results``)."""
        return {**figures, "data_card": self.to_dict()}

    def to_dict(self) -> dict[str, Any]:
        """JSON-simple values (the shown path only, never the machine path)."""
        return {
            "source": self.source,
            "sha256": self.sha256,
            "synthetic_preset": self.preset,
            "ledger": None
            if self.profile is None or not self.has_ledger
            else self.profile.to_dict(),
            "journal": None if self.journal is None else dict(self.journal),
            "journal_sessions": self.journal_sessions,
            "scored": list(self.scored),
            "items": [dict(i) for i in self.items],
        }


def _journal_counts(metrics_dir: Path) -> tuple[dict[str, int] | None, int | None]:
    path = metrics_dir / JOURNAL_NAME
    if not path.is_file():
        return None, None
    from evalkit.analyses._journal import read_journal

    records = read_journal(path).records
    versions = Counter(str(r.get("rubric_version")) for r in records)
    return dict(sorted(versions.items())), len({str(r.get("session_id")) for r in records})


def ledger_card(
    metrics_dir: str | os.PathLike[str], given: str = "", scored: Sequence[str] = ()
) -> DataCard:
    """The card of a metrics directory; ``given`` is the parameter as the caller set it
    (``""``: the notebook built the preset itself), ``scored`` the rubrics the page scored."""
    root = Path(metrics_dir)
    profile = ledger_profile(root)
    journal, sessions = _journal_counts(root)
    digest = content_sha256(root).get("sha256")
    return DataCard(
        source=shown_path(given) if given else "(built in a temp dir)",
        sha256=None if digest is None else str(digest),
        profile=profile,
        preset=preset_of(root),
        journal=journal,
        journal_sessions=sessions,
        scored=tuple(scored),
        has_ledger=(root / "sessions.jsonl").is_file(),
    )


def files_card(params: Mapping[str, Any], empty_means: Mapping[str, str] | None = None) -> DataCard:
    """The card of a study whose inputs are files: each path parameter's file (path, sha256,
    bytes), or, when empty, what the study uses instead (``empty_means``: its own words, over
    the defaults :func:`evalkit.analyses.show_parameters` shows)."""
    from evalkit.analyses import _EMPTY_MEANS

    words = {**_EMPTY_MEANS, **(empty_means or {})}
    items = []
    for name, value in params.items():
        if not (name.endswith(("_path", "_dir"))):
            continue
        if not value:
            default = words.get(name, "(the study's default data)")
            items.append({"parameter": name, "text": f"{markdown_code(name)}: {default}"})
            continue
        record = content_sha256(str(value))
        digest = record.get("sha256") or "(unreadable)"
        size = f", {record['bytes']} bytes" if "bytes" in record else ""
        items.append(
            {
                "parameter": name,
                "sha256": digest,
                "text": f"{markdown_code(name)}: {markdown_text(shown_path(value))}, sha256 "
                f"{markdown_code(str(digest))}{size}",
            }
        )
    return DataCard(source="files", sha256=None, items=tuple(items))


def fleet_card(metrics_dirs: Sequence[str]) -> DataCard:
    """The card of a fleet: one line per metrics directory (sessions, dates, events, sha256)."""
    items = []
    for d in metrics_dirs:
        p = ledger_profile(d)
        digest = str(content_sha256(d).get("sha256") or "(unreadable)")
        span = (
            f" ({p.first_start[:10]} to {p.last_end[:10]})" if p.first_start and p.last_end else ""
        )
        items.append(
            {
                "parameter": "metrics_dirs",
                "sha256": digest,
                "ledger": p.to_dict(),
                "text": f"{markdown_text(shown_path(d))}: {p.sessions} sessions{span}; "
                f"`events.jsonl` holds {markdown_text(p.events_text())}; sha256 "
                f"{markdown_code(digest[:12])}…",
            }
        )
    source = f"a fleet of {len(items)} metrics directories"
    return DataCard(source=source, sha256=None, items=tuple(items))
