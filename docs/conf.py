"""Sphinx's configuration of the documentation site: the markdown pages (the
README and ``docs/*.md``, read by MyST) and the API reference (``docs/api.md``:
autodoc and napoleon, from the Google-style docstrings). The source folder is the
repository's root, so that the pages' links between the README and ``docs/``
resolve as they do on GitHub. ``make docs`` builds it into ``build/docs`` with
warnings as errors (the Makefile's command, which ``tests/test_docs_site.py``
runs).
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout's package is the one documented

from deepxde_lnn import __version__ as release  # noqa: E402

project = "deepxde-lnn"
version = release
root_doc = "docs/index"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown"}
# the pages and the tables of the committed results (examples are downloads)
include_patterns = ["README.md", "docs/*.md", "docs/results/*/*.md"]
exclude_patterns = [".*", "build", "dist", "runs", "*.egg-info"]

# links to a heading (page.md#a-heading), as GitHub makes its anchors
myst_heading_anchors = 6

napoleon_google_docstring = True
napoleon_numpy_docstring = False
autodoc_typehints = "description"  # types beside each parameter's meaning
autodoc_typehints_description_target = "documented"
autodoc_typehints_format = "short"
autoclass_content = "class"  # a class's Args: are its constructor's
autodoc_member_order = "bysource"

html_theme = "alabaster"
html_title = f"deepxde-lnn {release}"
