"""``python -m deepxde_lnn.cases``: write ``catalog.json`` from the case modules."""

from pathlib import Path

from deepxde_lnn.cases import CATALOG, catalog_text
from deepxde_lnn.runs.atomic import atomic_write_text

print(atomic_write_text(Path(__file__).with_name(CATALOG), catalog_text()))
