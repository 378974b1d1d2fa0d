"""A study's page: the executed notebook as offline HTML, with run-specific metadata removed.

The page must open without a network (no script, font or stylesheet fetched) and rerun to the
same bytes for the same results, so reviewers can diff two runs.
"""

from __future__ import annotations

import re
from typing import Any

from evalkit.extras import require

__all__ = ["render_html", "stable_notebook"]

_HIDE_INPUT_TAGS = frozenset({"hide-input", "remove-input", "parameters", "injected-parameters"})
_REMOVE_CELL_TAGS = frozenset({"remove-cell"})


_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_OFFLINE_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
{% block notebook_css %}{{ super() }}
<style type="text/css">
div#notebook-container { width: auto; max-width: 1280px; }
div.output_area table { font-size: 12px; }
/* text cells (reasons, rationales) read left to right; row labels stay whole, column headings
   wrap between words (a long heading must not push its table past the page) */
.rendered_html td, .rendered_html th { text-align: left; vertical-align: top; }
.rendered_html tbody th { white-space: nowrap; }
.rendered_html thead th { white-space: normal; min-width: 6em; }
/* a table fits its column or scrolls inside its box (evalkit.analyses.page_tables); the classic
   template's fixed layout would clip the columns that do not fit */
.rendered_html table { table-layout: auto; margin-left: 0; }
div.output_subarea { max-width: 100%; overflow-x: auto; }
.evalkit-table { overflow-x: auto; max-width: 100%; }
.evalkit-table td { max-width: 42em; overflow-wrap: break-word; }
.evalkit-table.tall { max-height: 34em; overflow-y: auto; border: 1px solid #d0d7de; }
.evalkit-table.tall thead th { position: sticky; top: 0; background: #f6f8fa; }
details.evalkit-fold { margin: .4em 0; }
details.evalkit-fold > summary { cursor: pointer; padding: .3em .6em; background: #f6f8fa;
  border: 1px solid #d0d7de; border-radius: 3px; }
.evalkit-size { color: #59636e; }
ul.evalkit-notes { margin: .2em 0 .6em; padding-left: 1.2em; font-size: 12px; color: #424a53; }
/* a cell whose input is hidden and which printed nothing leaves no blank band */
div.code_cell:not(:has(*)) { display: none; }
</style>
{% endblock notebook_css %}
"""


def stable_notebook(nb: Any, name: str) -> Any:
    """Strip run-specific metadata and number cell ids, so reruns diff cleanly."""
    nb.metadata.pop("papermill", None)
    nb.metadata.pop("widgets", None)
    # nbformat cell ids are [A-Za-z0-9_-]{1,64}; an ad-hoc notebook's name may hold anything
    prefix = re.sub(r"[^A-Za-z0-9_-]", "-", name)[:48] or "cell"
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{prefix}-{i:02d}"
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell["execution_count"] = None
            for out in cell.get("outputs", []):
                if "execution_count" in out:
                    out["execution_count"] = None
                out.get("metadata", {}).pop("execution", None)
    return nb


def render_html(nb: Any, title: str) -> str:
    """Offline HTML of an executed notebook: inputs hidden by tag, no network reference."""
    require("nbconvert", purpose="rendering a study page")
    import jinja2
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import TagRemovePreprocessor

    exporter = HTMLExporter(
        template_name="classic",
        extra_loaders=[jinja2.DictLoader({"evalkit_offline.html.j2": _OFFLINE_TEMPLATE})],
        template_file="evalkit_offline.html.j2",
    )
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    tags = TagRemovePreprocessor(
        remove_input_tags=set(_HIDE_INPUT_TAGS), remove_cell_tags=set(_REMOVE_CELL_TAGS)
    )
    exporter.register_preprocessor(tags, enabled=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    # the inlined stylesheets carry licence/credit URLs in comments: drop comments, so the page
    # holds no URL at all apart from what the notebook's own output contains
    return re.sub(
        r"(<style[^>]*>)(.*?)(</style>)",
        lambda m: m.group(1) + _CSS_COMMENT.sub("", m.group(2)) + m.group(3),
        body,
        flags=re.DOTALL,
    )
