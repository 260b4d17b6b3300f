"""Cells of the CSV files deepxde-lnn writes, safe to open in a spreadsheet.

A spreadsheet runs a cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return as a formula (CSV injection), and a name from a case file can
begin so (a case named ``-A1-A2``). As OWASP advises, such text gets a leading
single quote, which spreadsheets show as text; so does text that already begins
with one, so :func:`read_cell` gives back exactly what was written. Numbers are
written as they are: ``-1.5e-3`` is a number to a spreadsheet, not a formula, and
reads back as one.
"""

from __future__ import annotations

__all__ = ["formula_safe", "read_cell", "FORMULA_START"]

# what begins a formula in a spreadsheet cell (OWASP, "CSV Injection")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_QUOTE = "'"


def formula_safe(value):
    """``value`` for a CSV cell: text that would begin a formula (or begins with
    the quote) behind a single quote; anything else (numbers, None) unchanged."""
    if isinstance(value, str) and value.startswith((*FORMULA_START, _QUOTE)):
        return _QUOTE + value
    return value


def read_cell(cell: str) -> str:
    """The text a cell written through :func:`formula_safe` holds."""
    return cell[1:] if cell.startswith(_QUOTE) else cell
