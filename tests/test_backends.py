"""The networks on every DeepXDE backend: with the same weights, each backend's
forward pass, Jacobian and Hessian (as DeepXDE takes them) agree with PyTorch's
and their parameter counts are equal; a short training converges; the engine
says in one line what it needs.

DeepXDE fixes its backend once per process, so each backend runs
``tests/backend_check.py`` in a process of its own with ``DDE_BACKEND`` set. A
backend whose libraries are not installed is skipped with that reason (they come
with the ``backends`` extra: ``pip install -e ".[test,backends]"``).
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest

from deepxde_lnn.networks.plan import lnn_plan, mlp_plan, rezero_plan

pytestmark = pytest.mark.backends
HERE = Path(__file__).resolve().parent
CHECK = HERE / "backend_check.py"
#: each backend and the libraries it needs (DeepXDE's own requirements)
LIBRARIES = {
    "tensorflow.compat.v1": ("tensorflow", "tensorflow_probability", "tf_keras"),
    "tensorflow": ("tensorflow", "tensorflow_probability", "tf_keras"),
    "jax": ("jax", "flax", "optax"),
    "paddle": ("paddle",),
}
OTHERS = list(LIBRARIES)
#: float32 within 1e-5 relative, float64 within 1e-12 (norm-wise, each array)
TOLERANCE = {"float32": 1e-5, "float64": 1e-12}

# the networks compared: every option that changes the layers
NETS = [
    dict(cls="LNN", sizes=[2, 8, 8, 1], activation="tanh", options={}),
    dict(cls="LNN", sizes=[2, 6, 6, 6, 2], activation="tanh",
         options=dict(layout="reduced", alpha_init=0.3)),
    dict(cls="LNN", sizes=[2, 8, 5, 2], activation="sin",
         options=dict(block_activation="tanh", block_layers=[1])),
    dict(cls="LNN", sizes=[2, 7, 7, 1], activation=["tanh", "sin", "tanh"],
         options=dict(residual=False)),
    dict(cls="LNN", sizes=[2, 6, 6, 1], activation="tanh",
         options=dict(train_alpha=False, alpha_init=0.25)),
    dict(cls="ReZero", sizes=[2, 6, 6, 1], activation="tanh", options={}),
    dict(cls="MLP", sizes=[2, 9, 9, 1], activation="tanh", options={}),
    # with DeepXDE's input and output transforms (backend_check.TRANSFORMS)
    dict(cls="LNN", sizes=[2, 8, 8, 2], activation="tanh", options={},
         transforms=True),
]  # fmt: skip


def missing(backend: str) -> list[str]:
    return [m for m in LIBRARIES[backend] if importlib.util.find_spec(m) is None]


def skip_missing(backend: str) -> None:
    gone = missing(backend)
    if gone:
        pytest.skip(
            f"DeepXDE backend {backend!r} needs {', '.join(gone)}, not installed "
            '(pip install -e ".[test,backends]")'
        )


def plan_of(cfg: dict):
    """The plan of a network of ``NETS``."""
    if cfg["cls"] == "LNN":
        return lnn_plan(cfg["sizes"], cfg["activation"], **cfg["options"])
    if cfg["cls"] == "ReZero":
        return rezero_plan(cfg["sizes"], cfg["activation"], **cfg["options"])
    return mlp_plan(cfg["sizes"], cfg["activation"])


def weights_of(plan, rng) -> dict[str, np.ndarray]:
    """Random weights in PyTorch's names and layout; gates not trained stay at
    ``alpha_init`` (they are constants on some backends)."""
    out = {}
    for i, (a, b) in enumerate(zip(plan.sizes, plan.sizes[1:])):
        out[f"linears.{i}.weight"] = rng.normal(0, 1 / np.sqrt(a), (b, a))
        out[f"linears.{i}.bias"] = rng.normal(0, 0.3, b)
    for k, j in enumerate(plan.block_layers):
        w = plan.sizes[j + 1]
        out[f"blocks.{k}.linear.weight"] = rng.normal(0, 1 / np.sqrt(w), (w, w))
        out[f"blocks.{k}.linear.bias"] = rng.normal(0, 0.3, w)
        shape = plan.gate_shape(w)
        alpha = rng.uniform(0.2, 0.8, shape) if plan.train_alpha else None
        out[f"blocks.{k}.alpha"] = (
            alpha if alpha is not None else np.full(shape, plan.alpha_init)
        )
    return out


def run_check(backend: str, *args, env=None) -> subprocess.CompletedProcess:
    full = {**os.environ, "DDE_BACKEND": backend, "OMP_NUM_THREADS": "1"}
    full.update(env or {})
    done = subprocess.run(
        [sys.executable, str(CHECK), *map(str, args)],
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    return done


@pytest.fixture(scope="module", params=["float32", "float64"])
def case(request, tmp_path_factory):
    """The spec, weights and PyTorch's numbers for one float type."""
    dtype = request.param
    root = tmp_path_factory.mktemp(dtype)
    rng = np.random.default_rng(7)
    nets = [dict(cfg, init="Glorot normal") for cfg in NETS]
    spec = root / "spec.json"
    spec.write_text(json.dumps({"float": dtype, "nets": nets}))
    weights = {"x": rng.uniform(-1, 1, (17, 2)).astype(dtype)}
    for k, cfg in enumerate(nets):
        for name, v in weights_of(plan_of(cfg), rng).items():
            weights[f"{k}/{name}"] = v.astype(dtype)
    np.savez(root / "weights.npz", **weights)
    run_check("pytorch", "numbers", spec, root / "weights.npz", root / "torch.npz")
    return dtype, root, dict(np.load(root / "torch.npz"))


def relative(a, b) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


@pytest.mark.slow  # starts a process per backend
@pytest.mark.parametrize("backend", OTHERS)
def test_every_backend_has_the_same_numbers_as_pytorch(backend, case):
    skip_missing(backend)
    dtype, root, torch_numbers = case
    out = root / f"{backend}.npz"
    env = {"JAX_ENABLE_X64": "1"} if dtype == "float64" else {}
    run_check(
        backend, "numbers", root / "spec.json", root / "weights.npz", out, env=env
    )
    got = dict(np.load(out))
    for k, cfg in enumerate(NETS):
        assert int(got[f"{k}/count"]) == int(torch_numbers[f"{k}/count"]), cfg
        assert int(got[f"{k}/count"]) == plan_of(cfg).parameter_count(), cfg
        for what in ("y", "d"):
            ours, theirs = got[f"{k}/{what}"], torch_numbers[f"{k}/{what}"]
            assert ours.dtype == np.dtype(dtype), (backend, cfg, what, ours.dtype)
            err = relative(ours, theirs)
            assert err < TOLERANCE[dtype], (
                backend,
                cfg["cls"],
                cfg["options"],
                what,
                err,
            )


@pytest.mark.slow  # its fixture starts a process
def test_the_check_can_fail(case):
    # a weight changed by one part in 10^4 is seen in every array compared
    dtype, root, torch_numbers = case
    y = torch_numbers["0/y"]
    assert relative(y * (1 + 1e-4), y) > TOLERANCE[dtype]


@pytest.mark.slow  # trains for seconds in a process per backend
@pytest.mark.parametrize("backend", ["pytorch", *OTHERS])
def test_the_lnn_trains_poisson_on_every_backend(backend, tmp_path):
    if backend != "pytorch":
        skip_missing(backend)
    run_check(backend, "train", tmp_path / "out.json")
    got = json.loads((tmp_path / "out.json").read_text())
    assert got["class"].endswith(backend.replace(".", "_"))
    assert got["adam"] < 0.1, got
    if backend != "jax":  # DeepXDE has no L-BFGS on JAX
        assert got["lbfgs"] < 1e-2, got


@pytest.mark.slow  # trains four models in a process
def test_lbfgs_trains_the_lnn_on_tensorflow_compat_v1(tmp_path):
    # DeepXDE's default recipe (Adam, then L-BFGS) on its default backend, where
    # its L-BFGS is SciPy's over the graph's variables: the loss SciPy minimizes
    # is the LNN's (it ends where SciPy's did), and it falls; DeepXDE's own FNN
    # stops where Adam left it under Keras 3 (docs/backends.md), no worse
    skip_missing("tensorflow.compat.v1")
    run_check("tensorflow.compat.v1", "lbfgs", tmp_path / "out.json")
    got = json.loads((tmp_path / "out.json").read_text())
    for example in ("poisson", "burgers"):
        lnn, fnn = got[f"{example}/lnn"], got[f"{example}/fnn"]
        assert lnn["after"] == pytest.approx(lnn["scipy"], rel=1e-4), got
        assert lnn["after"] < lnn["before"], got
        assert fnn["after"] <= fnn["before"] * (1 + 1e-6), got


@pytest.mark.slow  # a process
def test_the_kernel_constraint_holds_on_tensorflow_compat_v1(tmp_path):
    skip_missing("tensorflow.compat.v1")
    run_check("tensorflow.compat.v1", "constraint", tmp_path / "out.json")
    assert json.loads((tmp_path / "out.json").read_text())["min"] >= 0


@pytest.mark.slow  # two processes per backend
@pytest.mark.parametrize("backend", [b for b in OTHERS if b != "jax"])
def test_model_save_and_restore_in_a_new_process(backend, tmp_path):
    skip_missing(backend)  # (DeepXDE's Model.save has no JAX branch)
    run_check(backend, "saved", tmp_path, "save")
    run_check(backend, "saved", tmp_path, "restore")
    assert float((tmp_path / "restored").read_text()) == 0.0


@pytest.mark.slow  # a process per backend
@pytest.mark.parametrize("backend", ["tensorflow", "paddle"])
def test_the_liquid_deeponets_have_pytorchs_counts_and_shapes(backend, tmp_path):
    skip_missing(backend)
    run_check("pytorch", "deeponet", tmp_path / "torch.json")
    run_check(backend, "deeponet", tmp_path / "other.json")
    torch_nets = json.loads((tmp_path / "torch.json").read_text())
    ours = json.loads((tmp_path / "other.json").read_text())
    # paddle's paired DeepONet cannot be made liquid (docs/backends.md)
    names = ["LiquidDeepONetCartesianProd"] + ["LiquidDeepONet"] * (backend != "paddle")
    assert sorted(ours) == sorted(names)
    # DeepXDE's own TensorFlow DeepONets keep their output bias b in a list of
    # tf.Variable that Keras 3 does not track: one parameter fewer (FNN's too)
    untracked = 1 if backend == "tensorflow" else 0
    for name in names:
        assert ours[name]["shape"] == torch_nets[name]["shape"], name
        assert ours[name]["count"] == torch_nets[name]["count"] - untracked, name
    assert torch_nets["LiquidDeepONetCartesianProd"]["shape"] == [3, 7]


CONFIG_FILE = """
import deepxde_lnn
print(deepxde_lnn.LNN.__module__)
"""


@pytest.mark.slow  # a process
def test_deepxdes_config_file_chooses_the_backend(tmp_path):
    skip_missing("tensorflow")
    (tmp_path / ".deepxde").mkdir()
    (tmp_path / ".deepxde" / "config.json").write_text('{"backend": "tensorflow"}')
    env = {
        k: v for k, v in os.environ.items() if k not in ("DDE_BACKEND", "DDEBACKEND")
    }
    done = subprocess.run(
        [sys.executable, "-c", CONFIG_FILE],
        env={**env, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == "deepxde_lnn.networks.tensorflow"
    # read, never written
    config = tmp_path / ".deepxde" / "config.json"
    assert config.read_text() == '{"backend": "tensorflow"}'


@pytest.mark.slow  # a process
def test_importing_the_package_with_no_choice_writes_no_deepxde_config(tmp_path):
    # DeepXDE writes ~/.deepxde/config.json when it has to find a backend
    # itself; importing deepxde_lnn first chooses pytorch in its process only
    env = {
        k: v for k, v in os.environ.items() if k not in ("DDE_BACKEND", "DDEBACKEND")
    }
    code = "import deepxde_lnn, deepxde\nprint(deepxde.backend.backend_name)\n"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == "pytorch"
    assert not (tmp_path / ".deepxde").exists()


# DeepXDE's own examples, only their network line swapped (and their iteration
# counts cut): each on the backends its header lists, as written, or with the
# lines its comments give for JAX ("# Backend jax") in place of "# Most backends"
EXAMPLES = {
    # tf.sin as written; its comments give the lines for the other backends
    "pinn_forward/Poisson_Dirichlet_1d.py": ["tensorflow.compat.v1", "tensorflow"],
    "pinn_forward/Euler_beam.py": [
        "tensorflow.compat.v1", "tensorflow", "pytorch", "paddle"
    ],
    "pinn_forward/ode_system.py": [
        "tensorflow.compat.v1", "tensorflow", "pytorch", "jax", "paddle"
    ],
    # jax: its PDE indexes y as written, and it ends with L-BFGS (none on JAX)
    "pinn_inverse/Lorenz_inverse.py": ["tensorflow.compat.v1", "tensorflow", "pytorch"],
}  # fmt: skip
RUNS = [(e, b) for e, backends in EXAMPLES.items() for b in backends]


@pytest.fixture(scope="module")
def examples(tmp_path_factory) -> Path:
    """DeepXDE's examples folder, from the source distribution of the installed
    DeepXDE on the package index (its wheel has none)."""
    root = tmp_path_factory.mktemp("sdist")
    got = subprocess.run(
        [sys.executable, "-m", "pip", "download", f"deepxde=={version('deepxde')}",
         "--no-binary", ":all:", "--no-deps", "-q", "-d", str(root)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    archives = list(root.glob("deepxde-*.tar.gz"))
    if got.returncode or not archives:
        pytest.skip(f"DeepXDE's examples: pip download failed: {got.stderr[-300:]}")
    with tarfile.open(archives[0]) as tar:
        tar.extractall(root, filter="data")
    return next(root.glob("deepxde-*/examples"))


def for_jax(source: str) -> str:
    """The example as its comments say to write it for JAX: the lines under
    "# Backend jax" uncommented, those under "# Most backends" commented out."""
    out, mode = [], None
    for line in source.splitlines():
        text = line.strip()
        if text in ("# Most backends", "# Backend jax"):
            mode = text
        elif mode == "# Most backends" and text and not text.startswith("#"):
            line = line.replace(text, f"# {text}")
        elif mode == "# Backend jax" and text.startswith("# "):
            line = line.replace(text, text[2:])
        else:
            mode = None
        out.append(line)
    return "\n".join(out) + "\n"


def swapped(source: str) -> str:
    """The example with ``deepxde_lnn.LNN`` for ``dde.nn.FNN`` and its
    iterations cut (Adam to 300 steps, L-BFGS to 100)."""
    assert source.count("dde.nn.FNN(") == 1
    source = source.replace("dde.nn.FNN(", "deepxde_lnn.LNN(")
    source = re.sub(r"iterations=\d+", "iterations=300", source)
    head = (
        "import deepxde as dde\nimport deepxde_lnn\n"
        "dde.optimizers.set_LBFGS_options(maxiter=100)\n"
    )
    assert source.count("import deepxde as dde\n") == 1
    return source.replace("import deepxde as dde\n", head)


def test_the_examples_run_where_their_headers_say():
    # the table leaves out only what an example's own comments say needs edits
    for backends in EXAMPLES.values():
        assert set(backends) <= {"pytorch", *OTHERS}


@pytest.mark.slow  # trains in a process per example and backend
@pytest.mark.parametrize("example, backend", RUNS)
def test_deepxde_examples_with_the_lnn(example, backend, examples, tmp_path):
    if backend != "pytorch":
        skip_missing(backend)
    header = (examples / example).read_text().splitlines()[0]
    assert backend in header, header  # "Backend supported: ..."
    folder = tmp_path / "examples"
    shutil.copytree(examples, folder)
    script = folder / example
    source = script.read_text()
    if backend == "jax":
        assert "# Backend jax" in source
        source = for_jax(source)
    script.write_text(swapped(source))
    env = {**os.environ, "DDE_BACKEND": backend, "MPLBACKEND": "Agg"}
    env["OMP_NUM_THREADS"] = "1"
    done = subprocess.run(
        [sys.executable, script.name], cwd=script.parent, env=env,
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert "Best model at step" in done.stdout


NO_TORCH = """
import sys


class NoTorch:  # as if PyTorch were not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "torch":
            raise ModuleNotFoundError(f"No module named {name!r}")


sys.meta_path.insert(0, NoTorch())
import deepxde_lnn
net = deepxde_lnn.LNN([2, 8, 8, 1], "tanh", "Glorot normal", layout="reduced")
print(type(net).__module__)
try:
    deepxde_lnn.compare
except ImportError as err:
    print(err)
"""


@pytest.mark.slow  # a process per backend
@pytest.mark.parametrize("backend", OTHERS)
def test_the_networks_need_no_torch_and_the_engine_says_what_it_needs(backend):
    skip_missing(backend)
    done = subprocess.run(
        [sys.executable, "-c", NO_TORCH],
        env={**os.environ, "DDE_BACKEND": backend},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    module, error = done.stdout.splitlines()[-2:]
    assert module == f"deepxde_lnn.networks.{backend.replace('.', '_')}"
    assert error.startswith("deepxde_lnn.compare needs PyTorch, which is not installed")


@pytest.mark.slow  # a process
def test_without_torch_and_no_choice_deepxde_finds_its_backend(tmp_path):
    skip_missing("tensorflow.compat.v1")
    env = {
        k: v for k, v in os.environ.items() if k not in ("DDE_BACKEND", "DDEBACKEND")
    }
    code = NO_TORCH + "import deepxde\nprint(deepxde.backend.backend_name)\n"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "HOME": str(tmp_path)},  # no config file of DeepXDE's
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    module, _, chosen = done.stdout.splitlines()[-3:]
    # DeepXDE's own choice (its first installed backend), not pytorch
    assert chosen != "pytorch"
    assert module == f"deepxde_lnn.networks.{chosen.replace('.', '_')}"
