# The two commands of the README: `make run` (the main job) and `make test` (the tests).
# Each creates .venv and installs what it needs; torch comes first from the local CPU wheel
# so that nothing pulls a CUDA build.
VENV ?= .venv
PY := $(VENV)/bin/python
PAPERSIFT := $(VENV)/bin/papersift
SHARED_DATA ?= ../shared/data
# The main job's sources (default: the `sources` setting, live arXiv). Offline, use
#   make run SOURCES=file:$(SHARED_DATA)/arxiv-2025-2026.jsonl.gz [LIMIT=5000]
SOURCES ?=
LIMIT ?=
PYTEST_ARGS ?=

.PHONY: install run test lint readme clean mutate

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# Ingest, embed, group, summarize, then serve and print the URL.
run: install
	$(PAPERSIFT) up $(foreach s,$(SOURCES),--source $(s)) $(if $(LIMIT),--limit $(LIMIT))

test: install
	bash scripts/test-deps.sh
	$(PY) -m pytest -n 2 --dist loadfile $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts build/mutate

# Mutation testing of the rules that protect readers (slow, by hand, never in CI): one module
# at a time against a small subset of the tests; scores in build/mutate/*.json, docs/testing.md.
MUTATE ?= dedup gate query escaping readers templates
mutate: install
	$(PY) -m pip install -q -e '.[dev,mutate]'
	HF_HUB_OFFLINE=1 $(PY) scripts/mutate.py $(MUTATE)

# Regenerate the README's settings table from the declarations (a test checks it).
readme: install
	$(PY) -c "import re, pathlib; from papersift.settings import settings_markdown as t; p = pathlib.Path('README.md'); s = p.read_text(); p.write_text(re.sub(r'(<!-- settings:start -->\n).*?(<!-- settings:end -->)', lambda m: m.group(1) + t() + '\n' + m.group(2), s, flags=re.S))"
