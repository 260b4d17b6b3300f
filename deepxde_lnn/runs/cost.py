"""What a run's training cost, and whether its clock can be trusted.

A record keeps the wall seconds of its training (``train_seconds``) and the
process's CPU seconds over the same interval (``cpu_seconds``: every thread of
the process, from :func:`time.process_time`), its torch ``threads`` and the
1-minute load average at the start and end of its last session
(``load_average``). On a CPU, a process that got the cores it asked for runs
``threads`` CPU seconds per wall second; one that got clearly less shared the
machine, and its wall time overstates the step's cost. :func:`timing_state` is
the one rule that says so, :func:`cost` the one reading of a record's cost.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ..checks import is_number

__all__ = [
    "LOADED_SHARE",
    "Cost",
    "cost",
    "core_seconds",
    "cpu_share",
    "load_average",
    "timing_fields",
    "timing_state",
]

#: below this CPU share (CPU seconds over wall seconds × threads) a CPU run was
#: timed under load
LOADED_SHARE = 0.8


def load_average() -> float | None:
    """The machine's 1-minute load average now; None where the OS keeps none."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


def cpu_share(cpu_seconds, train_seconds, threads) -> float | None:
    """``cpu_seconds / (train_seconds × threads)``: the share of the cores asked
    for that the process got; None where a value is missing or the wall time 0."""
    if not (is_number(cpu_seconds) and is_number(train_seconds)):
        return None
    if not is_number(threads) or threads <= 0 or train_seconds <= 0:
        return None
    return cpu_seconds / (train_seconds * threads)


def timing_fields(
    train_seconds: float,
    cpu_seconds: float | None,
    threads: int,
    loads: tuple[float | None, float | None],
) -> dict:
    """A record's timing keys beside ``train_seconds`` (``threads``, torch's
    thread count, is the device's: :func:`~.provenance.device_info`):
    ``cpu_seconds`` (None: unknown, a session before CPU time was kept),
    ``cpu_share`` and ``load_average`` ``[start, end]`` (left out where the OS
    keeps none)."""
    out: dict = {
        "cpu_seconds": cpu_seconds,
        "cpu_share": cpu_share(cpu_seconds, train_seconds, threads),
    }
    if all(v is not None for v in loads):
        out["load_average"] = list(loads)
    return out


def timing_state(record: Mapping) -> str:
    """Whether ``record``'s run was timed under load: ``"loaded"`` when it ran on
    a CPU and its process got less than :data:`LOADED_SHARE` of the CPU time its
    threads asked for (its wall time overstates the step); ``"unknown"`` for a
    CPU run recorded without CPU time; ``"ok"`` otherwise. On a GPU the CPU time
    is not the step's cost, so this rule never flags a GPU run."""
    if record.get("device", "cpu") != "cpu":
        return "ok"
    share = cpu_share(
        record.get("cpu_seconds"), record.get("train_seconds"), record.get("threads")
    )
    if share is None:
        return "unknown"
    return "loaded" if share < LOADED_SHARE else "ok"


@dataclass(frozen=True)
class Cost:
    """A run's training cost: seconds per step and per run (None where the record
    keeps none), and its :func:`timing_state`."""

    step_seconds: float | None
    run_seconds: float | None
    state: str

    @property
    def flagged(self) -> bool:
        return self.state != "ok"


def cost(record: Mapping) -> Cost:
    """``record``'s cost: its CPU seconds where it was timed under load on a CPU
    (with one thread, what the step costs on an idle core), else its wall
    seconds (``seconds_per_step``, ``train_seconds``)."""
    state = timing_state(record)
    step, run = record.get("seconds_per_step"), record.get("train_seconds")
    if state == "loaded":  # the share is known, so both times are numbers > 0
        ratio = record["cpu_seconds"] / run
        step = None if step is None else step * ratio
        run = record["cpu_seconds"]
    return Cost(step, run, state)


def core_seconds(record: Mapping) -> float | None:
    """The processor time ``record``'s run took: on a CPU its process's CPU
    seconds (every thread's; where it kept none, its wall seconds times its
    threads), elsewhere its wall seconds on the device; None where unknown."""
    run = record.get("train_seconds")
    if record.get("device", "cpu") != "cpu":
        return run if is_number(run) else None
    if is_number(record.get("cpu_seconds")):
        return float(record["cpu_seconds"])
    threads = record.get("threads")
    if is_number(run) and is_number(threads) and threads > 0:
        return float(run) * threads
    return None
