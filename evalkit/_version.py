"""The one version source of evalkit.

``pyproject.toml`` reads it (setuptools' dynamic version, without importing evalkit), as do
records, calibration certificates, run logs and ``evalkit --version``; ``evalkit.__version__``
re-exports it.
"""

__version__ = "0.1.0"
