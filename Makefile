# Two commands on a fresh machine with Python 3.11:  make run   |   make test
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8501

.PHONY: run test lint bench chromium fonts poppler postgresql clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Stamps re-install only when the requirement files change.
$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
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

test: $(VENV)/.dev chromium fonts poppler postgresql lint
	$(BIN)/python -m pytest

# The reference TradingAgents is measured beside ours when its source and venv are found
# (bench/bench_reference.py: PEER_SRC, PEER_PY, TA_PERF_DIR; ../shared/perf/README.md sets them up).
bench: $(VENV)/.dev chromium
	$(BIN)/python -m pip install --quiet -r requirements-bench.txt
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache bench/results.json
