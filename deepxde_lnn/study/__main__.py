"""``python -m deepxde_lnn.study``: write ``catalog.json`` from the case modules
and :mod:`.shipped`."""

from pathlib import Path

from deepxde_lnn.runs.atomic import atomic_write_text
from deepxde_lnn.study.catalog import CATALOG
from deepxde_lnn.study.registry import catalog_text

print(atomic_write_text(Path(__file__).with_name(CATALOG), catalog_text()))
