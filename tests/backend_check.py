"""One DeepXDE backend's networks, in a process of its own (DeepXDE fixes its
backend once per process): ``DDE_BACKEND=jax python tests/backend_check.py MODE
...``, started by ``tests/test_backends.py``.

``numbers SPEC WEIGHTS OUT``: each network of the JSON file ``SPEC`` is built with
``deepxde_lnn``'s class for this backend, given the weights of ``WEIGHTS`` (an
``.npz`` in PyTorch's names and layout: ``K/linears.0.weight`` is ``(out, in)``),
and evaluated through ``dde.Model.predict`` at ``WEIGHTS["x"]``: its outputs, the
Jacobian of its first and last outputs (``dde.grad.jacobian``) and the Hessian of
its first (``dde.grad.hessian``), with its trainable-parameter count, into ``OUT``.

``saved DIR save`` then ``saved DIR restore`` (two processes): ``Model.save``,
then ``Model.restore`` into an LNN built with other gates.

``train OUT``: the LNN on DeepXDE's 1-D Poisson problem, Adam then L-BFGS where
the backend has it; its L2 relative error into ``OUT`` (JSON).

``lbfgs OUT``: DeepXDE's examples Poisson 1-D and Burgers (fewer points and
steps), each with ``dde.nn.FNN`` and with the LNN: the loss where Adam left it,
after L-BFGS, and the last loss SciPy's minimizer returned, into ``OUT`` (JSON).

``constraint OUT``: the LNN's kernels after Adam under ``NonNeg``, their
smallest entry into ``OUT`` (tensorflow.compat.v1).
"""

import json
import sys

import deepxde as dde
import numpy as np
from deepxde.backend import backend_name

import deepxde_lnn

BACKEND = backend_name
NO_LBFGS = ("jax",)


def value(z):
    """A derivative's value (JAX's ``dde.grad`` gives ``(value, function)``)."""
    return z[0] if isinstance(z, tuple) else z


def model_of(cfg: dict) -> dde.Model:
    """The network of ``cfg`` in a ``dde.Model`` on a 2-D square, compiled."""
    if BACKEND == "tensorflow.compat.v1":  # one network per graph
        dde.backend.tf.reset_default_graph()
    net = getattr(deepxde_lnn, cfg["cls"])(
        cfg["sizes"], cfg["activation"], cfg["init"], **cfg["options"]
    )
    if cfg.get("transforms"):
        net.apply_feature_transform(lambda x: 2 * x - 1)
        net.apply_output_transform(lambda x, y: x[:, 0:1] * (1 - x[:, 1:2]) * y)
    d = cfg["sizes"][0]
    geom = dde.geometry.Hypercube([0.0] * d, [1.0] * d)
    data = dde.data.PDE(geom, lambda x, y: value(y)[:, 0:1], [], 8, 0, num_test=8)
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    if BACKEND == "tensorflow.compat.v1":  # as dde.Model.train does at step 0
        model.sess.run(dde.backend.tf.global_variables_initializer())
    return model


def operator(d: int, last: int):
    """The derivatives at once: J of output 0, J of output ``last``, H of 0."""

    def op(x, y):
        parts = [
            value(dde.grad.jacobian(y, x, i=0)),
            value(dde.grad.jacobian(y, x, i=last)),
        ]
        parts += [
            value(dde.grad.hessian(y, x, component=0, i=i, j=j))
            for i in range(d)
            for j in range(d)
        ]
        return dde.backend.concat(parts, 1)

    return op


def set_weights(model: dde.Model, w: dict) -> None:
    """``w`` (PyTorch's names and layout) into ``model.net``."""
    net = model.net
    if BACKEND == "pytorch":
        import torch

        state = {k: torch.as_tensor(v) for k, v in w.items()}
        net.load_state_dict(state)
    elif BACKEND == "tensorflow":
        for name, v in w.items():
            _variable(net, name).assign(_keras(name, v))
    elif BACKEND == "tensorflow.compat.v1":
        tf = dde.backend.tf
        ops = [tf.assign(_graph(_variable(net, n)), _keras(n, v)) for n, v in w.items()]
        model.sess.run(ops)
    elif BACKEND == "paddle":
        for name, v in w.items():
            _variable(net, name).set_value(_keras(name, v))
    elif BACKEND == "jax":
        params = model.params[0]
        for name, v in w.items():
            *path, leaf = (
                name.replace("linears.", "linears_")
                .replace("blocks.", "blocks_")
                .split(".")
            )
            node = params["params"]
            for p in path:
                node = node[p]
            key = {"weight": "kernel"}.get(leaf, leaf)
            if key == "alpha" and key not in node:  # a fixed gate: a constant
                continue
            node[key] = np.asarray(_keras(name, v))
        model.params = [params, model.params[1]]
        model.net.params = params


def _graph(variable):
    """The graph's variable of a Keras 3 variable (``.value``), or itself."""
    tf = dde.backend.tf
    return variable if isinstance(variable, tf.Variable) else variable.value


def _keras(name: str, v: np.ndarray) -> np.ndarray:
    """A weight in the layout of this backend: kernels ``(in, out)`` but on
    PyTorch."""
    return v.T.copy() if name.endswith(".weight") else v


def _variable(net, name: str):
    """The variable of ``net`` for PyTorch's ``name`` (``blocks.1.linear.bias``):
    ``net.blocks[1].linear.bias``, with ``kernel`` for ``weight`` where Keras."""
    obj = net
    for part in name.split("."):
        if part.isdigit():
            obj = obj[int(part)]
        elif part == "weight" and BACKEND.startswith("tensorflow"):
            obj = obj.kernel
        else:
            obj = getattr(obj, part)
    return obj


def count(model: dde.Model) -> int:
    net = model.net
    if BACKEND == "jax":
        import jax

        return int(sum(p.size for p in jax.tree_util.tree_leaves(model.params[0])))
    if BACKEND == "paddle":
        return int(sum(p.size for p in net.parameters() if not p.stop_gradient))
    if BACKEND == "pytorch":
        return int(sum(p.numel() for p in net.parameters() if p.requires_grad))
    if BACKEND == "tensorflow":  # DeepXDE's count fails on Keras 3 variables
        return int(sum(np.prod(v.shape) for v in net.trainable_variables))
    return int(net.num_trainable_parameters())


def numbers(spec_path: str, weights_path: str, out_path: str) -> None:
    with open(spec_path) as f:
        spec = json.load(f)
    dde.config.set_default_float(spec["float"])
    weights = np.load(weights_path)
    x = weights["x"]
    out = {}
    for k, cfg in enumerate(spec["nets"]):
        model = model_of(cfg)
        prefix = f"{k}/"
        mine = {
            n[len(prefix) :]: weights[n] for n in weights.files if n.startswith(prefix)
        }
        model.predict(x[:1])  # Keras builds its layers at their first call
        set_weights(model, mine)
        sizes = cfg["sizes"]
        out[f"{k}/y"] = model.predict(x)
        out[f"{k}/d"] = model.predict(x, operator=operator(sizes[0], sizes[-1] - 1))
        out[f"{k}/count"] = np.array(count(model))
    np.savez(out_path, **out)


def train(out_path: str) -> None:
    """-u'' = pi^2 sin(pi x) on [-1, 1], u(+-1) = 0: u = sin(pi x)."""
    dde.config.set_random_seed(0)
    data = _poisson_data(32, 101)
    net = deepxde_lnn.LNN([1, 20, 20, 1], "tanh", "Glorot normal")
    model = dde.Model(data, net)
    model.compile("adam", lr=3e-3, metrics=["l2 relative error"])
    losshistory, _ = model.train(iterations=2000, display_every=1000)
    adam = float(losshistory.metrics_test[-1][0])
    lbfgs = None
    if BACKEND not in NO_LBFGS:  # DeepXDE has no L-BFGS on JAX
        dde.optimizers.set_LBFGS_options(maxiter=500)
        model.compile("L-BFGS", metrics=["l2 relative error"])
        losshistory, _ = model.train(display_every=1000)
        lbfgs = float(losshistory.metrics_test[-1][0])
    with open(out_path, "w") as f:
        json.dump({"adam": adam, "lbfgs": lbfgs, "class": type(net).__module__}, f)


def _poisson_data(domain: int, test: int):
    """-u'' = pi^2 sin(pi x) on [-1, 1], u(+-1) = 0, as DeepXDE's
    ``Poisson_Dirichlet_1d`` (``domain`` points inside, 2 on the boundary)."""
    geom = dde.geometry.Interval(-1, 1)

    def pde(x, y):
        return -value(dde.grad.hessian(y, x)) - np.pi**2 * dde.backend.sin(np.pi * x)

    bc = dde.icbc.DirichletBC(geom, lambda x: 0, lambda _, on: on)
    return dde.data.PDE(
        geom, pde, bc, domain, 2, solution=lambda x: np.sin(np.pi * x), num_test=test
    )


def _poisson_example():
    """DeepXDE's ``Poisson_Dirichlet_1d``: its data and network sizes."""
    return _poisson_data(16, 100), [1] + [50] * 3 + [1], "Glorot uniform"


def _burgers_example():
    """DeepXDE's ``Burgers`` with an eighth of its points."""
    geom = dde.geometry.Interval(-1, 1)
    geomtime = dde.geometry.GeometryXTime(geom, dde.geometry.TimeDomain(0, 0.99))

    def pde(x, y):
        y_x = value(dde.grad.jacobian(y, x, i=0, j=0))
        y_t = value(dde.grad.jacobian(y, x, i=0, j=1))
        y_xx = value(dde.grad.hessian(y, x, i=0, j=0))
        return y_t + y * y_x - 0.01 / np.pi * y_xx

    bc = dde.icbc.DirichletBC(geomtime, lambda x: 0, lambda _, on: on)
    ic = dde.icbc.IC(geomtime, lambda x: -np.sin(np.pi * x[:, 0:1]), lambda _, on: on)
    data = dde.data.TimePDE(
        geomtime, pde, [bc, ic], num_domain=320, num_boundary=10, num_initial=20
    )
    return data, [2] + [20] * 3 + [1], "Glorot normal"


def lbfgs(out_path: str) -> None:
    """Adam (200 steps) then L-BFGS (30), as the examples end, for each
    network: the summed train loss before and after, and SciPy's last one."""
    import scipy.optimize

    minimize, found = scipy.optimize.minimize, []

    def spy(*args, **kwargs):  # DeepXDE's SciPy L-BFGS-B calls it (compat.v1)
        result = minimize(*args, **kwargs)
        found.append(float(result.fun))
        return result

    scipy.optimize.minimize = spy
    dde.optimizers.set_LBFGS_options(maxiter=30)
    out = {}
    for name, example in (("poisson", _poisson_example), ("burgers", _burgers_example)):
        for net_name, cls in (("fnn", dde.nn.FNN), ("lnn", deepxde_lnn.LNN)):
            if BACKEND == "tensorflow.compat.v1":  # one network per graph
                dde.backend.tf.reset_default_graph()
            dde.config.set_random_seed(0)
            data, sizes, init = example()
            model = dde.Model(data, cls(sizes, "tanh", init))
            model.compile("adam", lr=1e-3)
            model.train(iterations=200, verbose=0)
            before = float(np.sum(model.train_state.loss_train))
            model.compile("L-BFGS")
            model.train(verbose=0)
            after = float(np.sum(model.train_state.loss_train))
            scipy_loss = found.pop() if found else None
            out[f"{name}/{net_name}"] = {
                "before": before,
                "after": after,
                "scipy": scipy_loss,
            }
    with open(out_path, "w") as f:
        json.dump(out, f)


def constraint(out_path: str) -> None:
    dde.config.set_random_seed(0)
    data, _, _ = _poisson_example()
    nonneg = dde.backend.tf.keras.constraints.NonNeg()
    net = deepxde_lnn.LNN(
        [1, 8, 8, 1], "tanh", "Glorot normal", kernel_constraint=nonneg
    )
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-2)
    model.train(iterations=20, verbose=0)
    kernels = [d.kernel for d in net.linears] + [b.linear.kernel for b in net.blocks]
    low = min(float(model.sess.run(_graph(k)).min()) for k in kernels)
    with open(out_path, "w") as f:
        json.dump({"min": low}, f)


def saved(folder: str, step: str) -> None:
    """``Model.save`` (``step`` "save": an LNN trained 50 steps, its predictions
    beside) or ``Model.restore`` into an LNN built otherwise (``alpha_init``
    0.1): the largest difference of its predictions, into ``folder/restored``."""
    geom = dde.geometry.Interval(-1, 1)
    bc = dde.icbc.DirichletBC(geom, lambda x: 0, lambda _, on: on)
    data = dde.data.PDE(
        geom, lambda x, y: value(dde.grad.hessian(y, x)) + 1, bc, 16, 2, num_test=8
    )
    alpha = 0.5 if step == "save" else 0.1
    net = deepxde_lnn.LNN([1, 8, 8, 1], "tanh", "Glorot uniform", alpha_init=alpha)
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-2)
    x = np.linspace(-1, 1, 9, dtype=np.float32)[:, None]
    if step == "save":
        model.train(iterations=50, verbose=0)
        np.save(f"{folder}/y.npy", model.predict(x))
        with open(f"{folder}/path", "w") as f:
            f.write(model.save(f"{folder}/model", verbose=0))
        return
    if BACKEND == "tensorflow":
        model.predict(x)  # Keras builds its layers at their first call
    with open(f"{folder}/path") as f:
        model.restore(f.read(), verbose=0)
    diff = np.abs(model.predict(x) - np.load(f"{folder}/y.npy")).max()
    with open(f"{folder}/restored", "w") as f:
        f.write(repr(float(diff)))


def deeponet(out_path: str) -> None:
    """Both liquid DeepONets where this backend has them: their trainable
    parameters and output shapes (3 functions of 5 sensors, 7 points)."""
    v = np.random.default_rng(0).uniform(size=(3, 5)).astype(np.float32)
    x = np.linspace(0, 1, 7, dtype=np.float32)[:, None]
    out = {}
    for name, inputs in (
        ("LiquidDeepONetCartesianProd", (v, x)),
        ("LiquidDeepONet", (v[:1].repeat(7, 0), x)),
    ):
        try:
            cls = getattr(deepxde_lnn, name)
        except AttributeError:
            continue
        net = cls([5, 16, 16], [1, 16, 16], "tanh", "Glorot normal")
        y = net(inputs) if BACKEND == "tensorflow" else net(tuple(map(_tensor, inputs)))
        if BACKEND == "pytorch":
            count = sum(p.numel() for p in net.parameters() if p.requires_grad)
        elif BACKEND == "paddle":
            count = sum(p.size for p in net.parameters() if not p.stop_gradient)
        else:
            count = sum(np.prod(w.shape) for w in net.trainable_variables)
        out[name] = {"count": int(count), "shape": list(np.shape(y))}
    with open(out_path, "w") as f:
        json.dump(out, f)


def _tensor(a: np.ndarray):
    """``a`` as this backend's tensor (PyTorch, Paddle)."""
    if BACKEND == "pytorch":
        import torch

        return torch.as_tensor(a)
    import paddle

    return paddle.to_tensor(a)


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    modes = {"numbers": numbers, "train": train, "saved": saved, "deeponet": deeponet}
    modes.update(lbfgs=lbfgs, constraint=constraint)
    modes[mode](*args)
