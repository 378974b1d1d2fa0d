"""Study notebooks run under the pre-registration lock by papermill, rendered offline."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below load lazily (_LAZY); these imports give them their types
    from evalkit.studies.lock import (
        Deviation,
        LockStatus,
        check_study,
        input_hashes,
    )
    from evalkit.studies.page import (
        render_html,
        stable_notebook,
    )
    from evalkit.studies.run import (
        RESULTS_ENV,
        STUDIES,
        StudyRun,
        StudyStatus,
        coerce_cli_value,
        declared_parameters,
        list_studies,
        notebook_path,
        run_study,
    )

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "Deviation": "evalkit.studies.lock",
    "LockStatus": "evalkit.studies.lock",
    "check_study": "evalkit.studies.lock",
    "input_hashes": "evalkit.studies.lock",
    "render_html": "evalkit.studies.page",
    "stable_notebook": "evalkit.studies.page",
    "RESULTS_ENV": "evalkit.studies.run",
    "STUDIES": "evalkit.studies.run",
    "StudyRun": "evalkit.studies.run",
    "StudyStatus": "evalkit.studies.run",
    "coerce_cli_value": "evalkit.studies.run",
    "declared_parameters": "evalkit.studies.run",
    "list_studies": "evalkit.studies.run",
    "notebook_path": "evalkit.studies.run",
    "run_study": "evalkit.studies.run",
}

__all__ = [
    "RESULTS_ENV",
    "STUDIES",
    "Deviation",
    "LockStatus",
    "StudyRun",
    "StudyStatus",
    "check_study",
    "coerce_cli_value",
    "declared_parameters",
    "input_hashes",
    "list_studies",
    "notebook_path",
    "render_html",
    "run_study",
    "stable_notebook",
]

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
