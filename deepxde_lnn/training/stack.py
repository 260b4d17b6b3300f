"""A stack: K runs equal but for the seed, trained by one ``dde.Model``, built from
their configurations and folders, or restored from their checkpoints."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field, replace

import deepxde as dde
import numpy as np

from ..config import RunConfig
from ..networks import compiled
from ..networks.stacked import StackedNet
from ..problems.problem import Problem, Profile
from ..runs.checkpoint import check_fits, load_checkpoint, set_rng_state
from ..runs.folder import FolderError, RunFolder
from .graphed import GraphedStep
from .stacking import StackedData

__all__ = [
    "Stack",
    "Run",
    "build",
    "check_checkpoints",
    "checkpoint_state",
    "kept_float",
    "quiet_float",
    "restore",
    "nothing_to_resume",
    "resume_state",
    "stacked_from",
]


@dataclass
class Run:
    """One of the runs a stack trains, with what is its own: configuration, folder,
    data (its sampler), network (its values after training) and loss log."""

    cfg: RunConfig
    folder: RunFolder
    data: dde.data.Data  # a ResampledPDE, or a user's data (TrackedData)
    net: dde.nn.NN
    prior_rows: np.ndarray | None = None  # loss rows of earlier phases/sessions
    prior_seconds: float = 0.0
    # CPU seconds over prior_seconds; None: a session before CPU time was kept
    prior_cpu_seconds: float | None = 0.0
    diverged_at: int | None = None
    fields: dict | None = None  # evaluation grid, exact and predicted values
    # [step, K] pairs: after each step, the run trained in a stack of K runs (1:
    # alone); the stack's size decides how its steps round (:func:`stacked_from`)
    stack_sizes: list = field(default_factory=list)


@dataclass
class Stack:
    """K runs equal but for the seed, trained by one ``dde.Model``: K = 1 trains
    the run's own data and net; K > 1 stacks them (:class:`StackedData`,
    :class:`StackedNet`: one Adam over the stacked parameters is K Adams)."""

    problem: Problem
    cfg: RunConfig  # the runs' configuration (the first run's seed)
    profile: Profile
    runs: list[Run]
    net: dde.nn.NN | StackedNet
    data: dde.data.Data  # a run's, or their StackedData
    model: dde.Model
    live: list[int]  # the runs still trained, in the stack's order
    start: int = 0
    resumed: bool = False
    torch_rng: dict | None = None  # a checkpoint's random states, set at step 1
    saved_opt: dict | None = None  # a checkpoint's phase, optimizers, scheduler
    phase: str = "adam"
    adam_text: str = ""  # the Adam phase's description, for the record
    converged: bool = False  # L-BFGS stopped before its iteration cap
    lbfgs_iterations: int | None = None  # L-BFGS's, where this session ran it
    lbfgs_loss_scale: float | None = None  # ScaledLBFGS's factor, likewise
    graphed: GraphedStep | None = None  # the Adam step, staged (cuda_graph)
    adam_step: str = ""  # how the Adam steps ran (GraphedStep.engine), if staged
    wall_seconds: float = 0.0  # this session's training time (all runs)
    cpu_seconds: float = 0.0  # this process's CPU time over wall_seconds
    # the 1-minute load average as this session's training starts and ends
    loads: tuple[float | None, float | None] = (None, None)

    @property
    def stacked(self) -> bool:
        return len(self.runs) > 1


def quiet_float(dtype: str) -> None:
    """``dde.config.set_default_float`` without its print."""
    with contextlib.redirect_stdout(io.StringIO()):
        dde.config.set_default_float(dtype)


@contextlib.contextmanager
def kept_float():
    """DeepXDE's (and torch's) default float type as it was, after a run that
    sets its own: a run of float64 leaves the caller's process in its float."""
    before = dde.config.default_float()
    try:
        yield
    finally:
        if dde.config.default_float() != before:
            quiet_float(before)


def build(problem: Problem, cfgs: list[RunConfig], folders: list) -> Stack:
    """Each run's data and network (seeded by its own seed, in this order) and
    the model that trains them (stacked when K > 1), not yet compiled
    (:func:`deepxde_lnn.training.phases.start`)."""
    cfg = cfgs[0]
    assert cfg.dtype is not None and cfg.profile is not None  # resolved
    quiet_float(cfg.dtype)
    profile = replace(
        problem.profile(cfg.profile), iterations=cfg.iterations, decay=cfg.decay
    )
    # a time budget would pay for the compile: its runs keep the eager jets on auto
    steps = 0 if cfg.seconds is not None else cfg.total_steps
    compile_jets = compiled.wanted(cfg.compile_jets, steps, len(cfgs))
    runs = []
    for c, folder in zip(cfgs, folders):
        assert c.seed is not None  # resolved
        dde.config.set_random_seed(c.seed)
        data = problem.build_data(c.method, profile, c.seed, compile_jets=compile_jets)
        runs.append(Run(c, folder, data, problem.build_net(c.method)))
    if len(runs) == 1:
        net, data = runs[0].net, runs[0].data
    else:
        net = StackedNet([r.net for r in runs])
        data = StackedData([r.data for r in runs])
    live = list(range(len(runs)))
    return Stack(problem, cfg, profile, runs, net, data, dde.Model(data, net), live)


def check_checkpoints(stack: Stack, states: list[dict]) -> None:
    """``CheckpointError`` unless every run's checkpoint fits its network, terms
    and steps."""
    for r, state in zip(stack.runs, states):
        # a user's DeepXDE data names its terms once it has evaluated its losses
        n_terms = len(r.data.names) or None
        check_fits(state, r.folder.checkpoint, r.net, n_terms, stack.cfg.total_steps)


def restore(stack: Stack, states: list[dict]) -> None:
    """Networks, random states, loss logs and training clocks from checkpoints;
    the optimizers' states are kept for their phase (``stack.saved_opt``)."""
    if stack.stacked:
        nets = StackedNet.from_state_dicts(
            stack.runs[0].net, [s["net"] for s in states]
        )
        stack.net.load_state_dict(nets.state_dict())
    else:
        stack.net.load_state_dict(states[0]["net"])
    for r, state in zip(stack.runs, states):
        r.data.rng.bit_generator.state = set_rng_state(state["rng"])
        r.stack_sizes = [list(p) for p in state.get("stack_sizes", [])]
        r.prior_seconds = float(state["seconds"])
        cpu = state.get("cpu_seconds")
        r.prior_cpu_seconds = None if cpu is None else float(cpu)
        r.prior_rows = state["loss"].numpy()
        r.data.load_state_dict(state.get("data", {}))
    first = states[0]
    stack.start, stack.resumed, stack.torch_rng = int(first["step"]), True, first["rng"]
    stack.saved_opt = {
        "phase": first.get("phase") or "adam",
        "opt": [s["opt"] for s in states],
        "scheduler": first.get("scheduler"),
    }


def stacked_from(run: Run, step: int, k: int) -> None:
    """Note in ``run.stack_sizes`` that after ``step`` it trains in a stack of
    ``k`` runs (nothing new where the size stays: a stack resumed whole, as it
    was, trains as the run that was never cut)."""
    if not run.stack_sizes or run.stack_sizes[-1][1] != k:
        run.stack_sizes.append([int(step), int(k)])


def nothing_to_resume(folder: RunFolder) -> FolderError:
    """The error of ``--resume`` in a folder without a checkpoint."""
    return FolderError(f"--resume: no checkpoint in {folder.path}")


def resume_state(folder: RunFolder, cfg: RunConfig, resume: bool, overwrite: bool):
    """``(finished record, None)`` to reuse (its checkpoint, if a stack left one,
    is the caller's), ``(None, checkpoint state)`` to continue, or ``(None,
    None)`` to start afresh (always with ``overwrite``)."""
    if overwrite:
        folder.clear()
        return None, None
    record = folder.finished(cfg.identity(), RunConfig.identity_of)
    if record is not None:
        return record, None
    if not folder.has_checkpoint():
        if resume:
            raise nothing_to_resume(folder)
        return None, None
    if not resume:
        raise FolderError(
            f"out: {folder.path} holds an unfinished run's checkpoint; pass "
            "--resume to continue it or choose another folder"
        )
    return None, checkpoint_state(folder, cfg)


def checkpoint_state(folder: RunFolder, cfg: RunConfig) -> dict:
    """The checkpoint in ``folder``, made by the run ``cfg``; ``CheckpointError``
    (unreadable) or ``FolderError`` (another configuration) naming it."""
    state = load_checkpoint(folder.checkpoint)
    saved = state.get("config", {}) if isinstance(state, dict) else {}
    try:
        want, have = cfg.identity(), RunConfig.identity_of(saved)
    except ValueError as err:  # an option's value in it does not check
        raise FolderError(
            f"--resume: {folder.checkpoint} holds a malformed configuration ({err})"
        ) from None
    differ = [k for k in {**want, **have} if have.get(k) != want.get(k)]
    if differ:
        detail = ", ".join(f"{k}: {have.get(k)!r} vs {want.get(k)!r}" for k in differ)
        raise FolderError(
            f"--resume: {folder.checkpoint} was made with another configuration "
            f"({detail}; checkpoint vs asked)"
        )
    return state
