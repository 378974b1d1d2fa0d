"""What a person should not read on a study page, scanned in headless Chromium.

:data:`SCAN` opens every folded ``<details>`` and reports the page's visible text, its prose,
its tables' columns and the tables wider than the page's column without a scroll box;
:func:`defects` lists what is wrong with that: ``NaN``/``None``, raw floats, raw warnings,
stderr blocks, doubled phrases, an explanation repeated down a table column, clipped tables.
Used by tests/test_page_text.py (the demo and fleet pages) and tests/test_real_ledger_studies.py
(every real ledger's pages).
"""

from __future__ import annotations

import re
from typing import Any

# Opens every <details>, then reports the visible text, the text outside tables, each table's
# columns (cell texts) and the tables wider than the page's column without a scroll box.
SCAN = """(() => {
  const closed = document.documentElement.scrollHeight;  // as first shown: folds closed
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const prose = Array.from(document.querySelectorAll('p, li, h1, h2, h3, h4, summary'))
      .filter(el => !el.closest('table')).map(el => el.innerText);
  const tables = Array.from(document.querySelectorAll('table')).map(t => {
    const cols = {};
    t.querySelectorAll('tbody tr').forEach(tr => Array.from(tr.children).forEach((td, i) => {
      (cols[i] = cols[i] || []).push(td.innerText.trim());
    }));
    return Object.values(cols);
  });
  const column = document.querySelector('#notebook-container, body').getBoundingClientRect();
  const clipped = Array.from(document.querySelectorAll('table')).filter(t => {
    const r = t.getBoundingClientRect();
    if (r.right <= column.right + 1) return false;
    for (let el = t.parentElement; el; el = el.parentElement) {
      const s = getComputedStyle(el);
      if (s.overflowX === 'auto' || s.overflowX === 'scroll') {
        return el.getBoundingClientRect().right > column.right + 1;
      }
    }
    return true;
  }).length;
  const overflowing = Array.from(document.querySelectorAll('table')).filter(t => {
    const box = t.closest('.evalkit-table, .output_subarea');
    return box !== null && t.getBoundingClientRect().width > box.clientWidth + 1;
  }).length;
  return JSON.stringify({text: document.body.innerText, prose, tables, clipped, overflowing,
                         stderr: document.querySelectorAll('.output_stderr').length,
                         closed});
})()"""

_WORDS = re.compile(r"\b(?:nan|NaN|NAN|None)\b")
_RAW_FLOAT = re.compile(r"(?<![\w.])\d+\.\d{5,}\b")
_WARNING = re.compile(r"\b\w*Warning\b|warnings\.warn|Traceback \(most recent")
# a phrase of three or more words said twice in a row ("does not graduate — does not graduate")
_DOUBLED = re.compile(r"\b(\w+(?:\s+\w+){2,})\W+\1\b", re.IGNORECASE)


def _prose(cell: str) -> bool:
    """An explanation, not a figure or a list of labels: six words, five of them different."""
    words = re.findall(r"[^\W\d_]{2,}", cell)
    return len(words) >= 6 and len({w.lower() for w in words}) >= 5


def defects(scan: dict[str, Any]) -> list[str]:
    """What a person should not read on the page (empty: none)."""
    found = [f"word {m.group(0)!r}" for m in _WORDS.finditer(scan["text"])]
    found += [f"raw float {m.group(0)!r}" for m in _RAW_FLOAT.finditer(scan["text"])]
    found += [f"raw warning {m.group(0)!r}" for m in _WARNING.finditer(scan["text"])]
    found += [f"stderr output ({scan['stderr']} blocks)"] * bool(scan["stderr"])
    for line in scan["prose"]:
        found += [f"doubled {m.group(1)!r}" for m in _DOUBLED.finditer(line)]
    for table in scan["tables"]:
        for cells in table:
            long = [c for c in cells if _prose(c)]
            for cell in set(long):
                if long.count(cell) > 3:
                    found.append(f"repeated {long.count(cell)} times in a column: {cell[:60]!r}")
    found += [f"{scan['clipped']} table(s) wider than the page, not in a scroll box"] * bool(
        scan["clipped"]
    )
    return found
