# Two commands from a fresh clone (Python >= 3.10): `make demo` runs the main
# comparison, `make test` the tests but the slow tier (under four minutes on two
# cores). Each sets up .venv on its first call (the CPU build of PyTorch, then the
# package with its test extra) and reuses it afterwards; a change to setup.cfg or
# pyproject.toml installs again. README.md documents the same commands for those
# who manage their own environment. `make test-slow` runs the slow tier (the
# tests marked `slow`: processes, signals, pools, seconds of training); CI runs
# both, so every test runs there.
# `make test-backends` adds DeepXDE's other backends to .venv (TensorFlow, JAX,
# Paddle: the `backends` extra) and tests the networks on each. `make test-slurm`
# runs `--backend slurm` on a one-node SLURM that the test starts (.ci/slurm.sh).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
BACKENDS := $(VENV)/.backends

.DEFAULT_GOAL := help
.PHONY: help demo test test-slow test-backends test-slurm docs pinnacle

help:
	@echo "make demo   the main comparison: deepxde-lnn compare laplace (a few minutes on a CPU)"
	@echo "make test   the tests (ruff check, the import layers and mypy included) but the slow tier, on two cores"
	@echo "make test-slow   the slow tier: tests that start processes, send signals or train for seconds"
	@echo "make test-backends   the networks on DeepXDE's other backends (installs them: about 2 GB)"
	@echo "make test-slurm   --backend slurm on a one-node SLURM the test starts (root, Debian's slurm-wlm)"
	@echo "make docs   rebuild the case catalog, docs/options.md, docs/REPRODUCTION.md, README.md's generated blocks,"
	@echo "            deepxde_lnn/keywords.py and the documentation site (build/docs/docs/index.html)"
	@echo "make pinnacle   the PINNacle study: lnn, pinn, pinn-matched on its twelve problems (docs/pinnacle.md;"
	@echo "                PROFILE=quick on a CPU, the default; PROFILE=accurate, the strong CPU profile; PROFILE=pinnacle, its protocol, on a GPU;"
	@echo "                METHODS=laaf,pirate,fourier for the alternatives; CASES=... for some of the problems)"

demo: $(INSTALLED)
	$(BIN)/deepxde-lnn compare laplace

test: $(INSTALLED)
	$(BIN)/python -m pytest -q -n 2 -m "not slow and not backends and not slurm"

test-slow: $(INSTALLED)
	$(BIN)/python -m pytest -q -n 2 -m "slow and not backends and not slurm"

test-slurm: $(INSTALLED)
	$(BIN)/python -m pytest -q -m slurm

test-backends: $(BACKENDS)
	$(BIN)/python -m pytest -q -n 2 -m backends

docs: $(INSTALLED)
	$(BIN)/python -m deepxde_lnn.study
	$(BIN)/python -m deepxde_lnn.flags docs/options.md
	$(BIN)/deepxde-lnn report docs/results --readme README.md
	$(BIN)/python -m deepxde_lnn.api deepxde_lnn/keywords.py
	$(BIN)/python -m sphinx -W --keep-going -q -b html -c docs . build/docs

PROFILE ?= quick
METHODS ?= lnn,pinn,pinn-matched
CASES ?=
comma := ,
PINNACLE = $(BIN)/python -c "from deepxde_lnn.study.shipped import PINNACLE; print(*PINNACLE)"

pinnacle: $(INSTALLED)
	for c in $(or $(subst $(comma), ,$(CASES)),$$($(PINNACLE))); do \
		$(BIN)/deepxde-lnn compare $$c --profile $(PROFILE) --methods $(METHODS) \
			--out docs/results/pinnacle-$(PROFILE)/$$c || exit 1; \
	done

$(INSTALLED): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/pip install torch==2.13.0
	$(BIN)/pip install -e ".[test]"
	touch $@

# after [test], not with it: paddle pins opt_einsum 3.3, heavyball (soap) asks for
# 3.4, which pip cannot resolve in one command; heavyball runs on 3.3
$(BACKENDS): $(INSTALLED)
	$(BIN)/pip install -e ".[backends]"
	touch $@
