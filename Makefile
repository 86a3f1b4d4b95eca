# Two commands on a fresh machine with Python 3.11:  make run   |   make test
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8501

.PHONY: run test lint typecheck bench chromium fonts poppler postgresql lock clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet pip==26.3

# Every install takes its versions from constraints.txt, the whole set pinned (transitive ones
# included), so a release upstream cannot change what a fresh clone runs. `make lock` remakes it.
PIP_INSTALL := $(BIN)/python -m pip install --quiet -c constraints.txt

# Stamps re-install only when the requirement files change.
$(VENV)/.runtime: requirements.txt constraints.txt | $(BIN)/python
	$(PIP_INSTALL) -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt constraints.txt | $(BIN)/python
	$(PIP_INSTALL) -r requirements-dev.txt
	touch $(VENV)/.runtime $@

run: $(VENV)/.runtime
	@$(MAKE) --no-print-directory fonts || echo "note: the PDF report needs $(FONT_PKGS) for CJK text; the app runs without them"
	$(BIN)/streamlit run app.py --server.port $(PORT)

# Debian's Chromium for the browser tests (never a downloaded browser build).
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
	  echo "Installing Debian's chromium for the browser tests…"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; \
	fi

# Debian's fonts for the PDF report: DejaVu Sans, and WenQuanYi Micro Hei for Chinese, Japanese and
# Korean text (without them the PDF falls back to Helvetica and cannot draw CJK characters).
FONT_PKGS := fonts-dejavu-core fonts-wqy-microhei
fonts:
	@if [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || [ ! -f /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ]; then \
	  echo "Installing Debian's fonts for the PDF report ($(FONT_PKGS))…"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(FONT_PKGS) >/dev/null; \
	fi

# Debian's poppler-utils for the PDF tests: pdftoppm renders the handout's pages to PNG, pdftotext reads them.
poppler:
	@if ! command -v pdftoppm >/dev/null 2>&1 || ! command -v pdftotext >/dev/null 2>&1; then \
	  echo "Installing Debian's poppler-utils for the PDF tests…"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq poppler-utils >/dev/null; \
	fi

# Debian's PostgreSQL for the desk-storage tests: they make a throwaway cluster (initdb) on 127.0.0.1.
postgresql:
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then \
	  echo "Installing Debian's postgresql for the storage tests…"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql >/dev/null; \
	fi

lint: $(VENV)/.dev
	$(BIN)/ruff check .

# mypy over the layers pyproject.toml's [tool.mypy] names (a second or so once its cache is warm)
typecheck: $(VENV)/.dev
	$(BIN)/mypy

test: $(VENV)/.dev chromium fonts poppler postgresql lint typecheck
	$(BIN)/python -m pytest

# The reference TradingAgents is measured beside ours when its source and venv are found
# (bench/bench_reference.py: PEER_SRC, PEER_PY, TA_PERF_DIR; ../shared/perf/README.md sets them up).
bench: $(VENV)/.dev chromium postgresql
	$(PIP_INSTALL) -r requirements-bench.txt
	$(BIN)/python -m bench

# constraints.txt: every package the three requirement files install, resolved afresh by pip-tools
# (in a throwaway venv) to the newest versions that fit their pins. Run it after changing a
# requirement file, then run `make test` and commit both.
LOCK_VENV := $(VENV)-lock
lock:
	rm -rf $(LOCK_VENV) && $(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet --upgrade pip pip-tools==7.6.2
	$(LOCK_VENV)/bin/pip-compile --quiet --strip-extras --allow-unsafe --no-emit-index-url --no-emit-find-links \
	  --no-header --output-file constraints.txt requirements-bench.txt
	sed -i '1i # The whole set of packages, pinned: `make lock` writes this file (pip-tools, from requirements-bench.txt,\n# which includes requirements-dev.txt and requirements.txt). Every install reads it as constraints.' constraints.txt
	rm -rf $(LOCK_VENV)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache bench/results.json
