"""Mutation testing of the rules that protect readers, one module at a time (issue 20).

    .venv/bin/python scripts/mutate.py MODULE...   (or `make mutate [MUTATE=gate]`)

Each module is mutated by mutmut in a work folder of its own (build/mutate/MODULE) against a
small, fast subset of the tests that speak for its rules, one process at a time (the machine
is shared). The score is killed / all mutants generated, less the mutants listed as
equivalent below (each with the reason it cannot change what a reader or caller sees).
The templates are not Python: `templates` adds `|safe` to each printed expression in turn and
renders every page kind with hostile text in-process (scripts/mutate_templates.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "mutate"
MUTMUT = str(Path(sys.executable).with_name("mutmut"))
NOT_PG = ["-k", "not postgresql", "-m", "not slow and not browser"]

# name: (files mutated, mutant-name globs (None: every function of those files), tests)
MODULES: dict[str, tuple[list[str], list[str] | None, list[str]]] = {
    "dedup": (
        ["src/papersift/ingest/prepare.py", "src/papersift/ingest/merge.py",
         "src/papersift/store/sqlite/papers.py"],
        ["papersift.ingest.prepare.x_norm_title_key*", "papersift.ingest.prepare.x_slugify*",
         "papersift.ingest.merge.*", "papersift.store.sqlite.papers.*_originals*",
         "papersift.store.sqlite.papers.*_insert_papers*"],
        ["tests/test_store_papers.py", "tests/test_ingest_merge.py"],
    ),
    "gate": (
        ["src/papersift/summarize/gate.py"], None,
        ["tests/test_summarize_gate.py", "tests/test_properties.py"],
    ),
    "query": (
        ["src/papersift/search/keyword.py", "src/papersift/store/sqlite/search.py"],
        ["papersift.search.keyword.x_parse_query*", "papersift.search.keyword.x_clean_text*",
         "papersift.search.keyword.x__take_filter*", "papersift.search.keyword.x__items*",
         "papersift.search.keyword.x__words*", "papersift.search.keyword.x__fix_operators*",
         "papersift.store.sqlite.search.x_fts_expression*", "papersift.store.sqlite.search.x_fts_term*"],
        ["tests/test_search_query.py", "tests/test_properties.py"],
    ),
    # Escaping: autoescape in the environment, and the one place Python writes markup (the
    # <mark> of search hits). The snippet's choice of window is presentation, not escaping.
    "escaping": (
        ["src/papersift/search/highlight.py", "src/papersift/web/render.py"],
        ["papersift.search.highlight.xǁHighlighterǁmark*",
         "papersift.search.highlight.xǁHighlighterǁ_lead*",
         "papersift.search.highlight.xǁHighlighterǁ__init__*",
         "papersift.search.highlight.xǁHighlighterǁ_spans*",
         "papersift.web.render.x_environment*"],
        ["tests/test_web_escaping.py", "tests/test_search_query.py", "tests/test_web_units.py"],
    ),
    "readers": (
        ["src/papersift/readers/accounts.py"], None,
        ["tests/test_readers_accounts.py"],
    ),
}


def _work_folder(name: str) -> Path:
    """build/mutate/NAME with the sources, the tests and a pyproject of this module's config."""
    files, _, tests = MODULES[name]
    folder = BUILD / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shutil.copytree(ROOT / "src", folder / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests", folder / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    pytest_options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    options = pytest_options["ini_options"]
    lines = ["[tool.mutmut]", 'source_paths = ["src"]', f"only_mutate = {json.dumps(files)}",
             'also_copy = ["tests", "pyproject.toml"]',
             f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
             f"pytest_add_cli_args = {json.dumps(['-p', 'no:cacheprovider', *NOT_PG])}",
             "", "[tool.pytest.ini_options]", f"addopts = {json.dumps(options['addopts'])}",
             f"markers = {json.dumps(options['markers'])}"]
    (folder / "pyproject.toml").write_text("\n".join(lines) + "\n")
    return folder


def run_module(name: str) -> dict[str, object]:
    """Mutate one module; its counts by outcome, written to build/mutate/NAME.json."""
    if name == "templates":
        return json.loads(subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "mutate_templates.py")],
            check=True, capture_output=True, text=True, cwd=ROOT).stdout.splitlines()[-1])
    folder = _work_folder(name)
    globs = MODULES[name][1] or []
    # Each mutant is a pytest session: their numbered temp folders live in the work folder,
    # so pytest's clean-up of old ones never touches another run's (or another person's).
    temp_root = folder / "tmp"
    temp_root.mkdir()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTEST_DEBUG_TEMPROOT": str(temp_root)}
    subprocess.run([MUTMUT, "run", "--max-children", "1", *globs], cwd=folder, env=env,
                   check=False)
    listing = subprocess.run([MUTMUT, "results", "--all", "true"], cwd=folder, env=env,
                             capture_output=True, text=True, check=True).stdout
    outcomes: dict[str, list[str]] = {}
    for line in listing.splitlines():
        mutant, _, outcome = line.strip().rpartition(": ")
        if mutant and _selected(mutant, globs):
            outcomes.setdefault(outcome, []).append(mutant)
    equivalent = [m for m in EQUIVALENT.get(name, {}) if m in sum(outcomes.values(), [])]
    killed = len(outcomes.get("killed", [])) + len(outcomes.get("timeout", []))
    total = sum(len(v) for v in outcomes.values()) - len(equivalent)
    summary = {"module": name, "killed": killed, "total": total,
               "score": round(killed / total, 4) if total else None,
               "equivalent": {m: EQUIVALENT[name][m] for m in equivalent},
               "counts": {k: len(v) for k, v in outcomes.items()},
               "survived": [m for m in outcomes.get("survived", []) if m not in equivalent],
               "not_checked": outcomes.get("not checked", []) + outcomes.get("no tests", [])}
    (BUILD / f"{name}.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _selected(mutant: str, globs: list[str]) -> bool:
    from fnmatch import fnmatchcase

    return not globs or any(fnmatchcase(mutant, g) for g in globs)


# Mutants that cannot change what a reader or caller sees, by module, with the reason.
_STRIPS = "strips the characters X and 0 from a string of digits: the same as stripping 0"
_SPACED = ("letters part digits as a space does: the number pattern's look-behind only sees"
           " digits, '.' and ','")
_SPLIT = "the piece pattern splits at '-', '/' and '_' itself: the replace only adds speed"
_LONE_QUOTE = ("a lone quote is at most one token (any two quotes are read as a phrase): 'an odd"
               " count of lone quotes' and 'a lone quote' are the same test")
_NO_WORDS = ("a lone quote or parenthesis, or an empty phrase, has no words: whichever branch"
             " reads it skips it")
_FALSY = "None and False are both false where the flag is read"
_SQL_CASE = "SQL keywords and names are case-insensitive: only the case of the statement changed"
_PAPERS = "papersift.store.sqlite.papers.xǁPapersǁ"
_KEY = ("a title key is only compared with keys this function made, and lowercase words never"
        " hold 'XX': the changed separator is as injective as the original")
_FIRST_PART = "the first part of a split at ':' is the same however many splits follow"
EQUIVALENT: dict[str, dict[str, str]] = {
    "gate": {
        "papersift.summarize.gate.x__canonical_number__mutmut_11": _STRIPS,
        "papersift.summarize.gate.x__canonical_number__mutmut_18": _STRIPS,
        "papersift.summarize.gate.x_numbers_in__mutmut_9": _SPACED,
        "papersift.summarize.gate.x_numbers_in__mutmut_13": _SPACED,
        "papersift.summarize.gate.x__pieces__mutmut_15": _SPLIT,
        "papersift.summarize.gate.x__pieces__mutmut_17": _SPLIT,
        "papersift.summarize.gate.x__pieces__mutmut_19": _SPLIT,
        "papersift.summarize.gate.x_build_source__mutmut_38":
            "GateSource.text is read by no code (the gate checks numbers, names and words)",
    },
    "dedup": {
        **{f"{_PAPERS}_originals__mutmut_{n}": _SQL_CASE for n in (15, 16, 30, 31)},
        **{f"{_PAPERS}_insert_papers__mutmut_{n}": _SQL_CASE for n in (
            39, 40, 47, 48, 50, 52, 53, 61, 62, 64, 65, 71, 72, 78, 79, 85, 86)},
        **{f"{_PAPERS}_insert_papers__mutmut_{n}":
           "the DOI and title-key maps hold no None key: get(None) finds nothing either way"
           for n in (12, 15)},
        "papersift.ingest.merge.x_source_kind__mutmut_4": _FIRST_PART,
        "papersift.ingest.merge.x_source_kind__mutmut_7": _FIRST_PART,
        "papersift.ingest.merge.x_merge__mutmut_22":
            "every known source ranks 10 or more: an unknown incoming source ranked 1 instead"
            " of 0 beats and loses to the same stored sources",
        "papersift.ingest.prepare.x_slugify__mutmut_14": "codec names are case-insensitive",
        "papersift.ingest.prepare.x_slugify__mutmut_25":
            "a lowercased slug holds no 'X' to strip",
        "papersift.ingest.prepare.x_norm_title_key__mutmut_34":
            "a first author without a name gives every key the same constant part either way",
        "papersift.ingest.prepare.x_norm_title_key__mutmut_38": _KEY,
        "papersift.ingest.prepare.x_norm_title_key__mutmut_39": _KEY,
    },
    "escaping": {
        **{f"papersift.search.highlight.xǁHighlighterǁ__init____mutmut_{n}":
           "every alternative of the pattern runs to the end of its word, so their order never"
           " changes a match" for n in (3, 6, 7, 9)},
        "papersift.search.highlight.xǁHighlighterǁ_lead__mutmut_1":
            "the default of `cut` is never used: its one caller (snippet) always passes it",
        "papersift.search.highlight.xǁHighlighterǁ__init____mutmut_25":
            "the pattern is compiled IGNORECASE: [IY] matches what [iy] does",
        "papersift.search.highlight.xǁHighlighterǁmark__mutmut_6":
            "the spans a caller passes are the ones _spans finds in the same text (snippet's"
            " window): finding them again costs time, not a different mark",
    },
    "readers": {
        **{f"papersift.readers.accounts.x_log_in__mutmut_{n}":
           "the two lists zipped always have two items: strict or not, the same pairs"
           for n in (17, 20, 21)},
        "papersift.readers.accounts.x_log_in__mutmut_1":
            "the default address only names one rate-limit key: any constant does the same",
        "papersift.readers.accounts.x_start_session__mutmut_2":
            "secrets.token_urlsafe(None) draws its default, 32 bytes: the same as 32",
    },
    "query": {
        **{f"papersift.search.keyword.x__items__mutmut_{n}": _LONE_QUOTE
           for n in (4, 5, 6, 7, 8, 10, 11)},
        **{f"papersift.search.keyword.x__items__mutmut_{n}": _NO_WORDS
           for n in (25, 26, 27, 30, 35, 36)},
        "papersift.search.keyword.x_parse_query__mutmut_77":
            "the free text is collapsed to single spaces and stripped just before: split(None)"
            " and split(' ') give the same words",
        "papersift.search.keyword.x__fix_operators__mutmut_2": _FALSY,
        "papersift.store.sqlite.search.x_fts_expression__mutmut_2": _FALSY,
        "papersift.store.sqlite.search.x_fts_expression__mutmut_5": _FALSY,
    },
}


def main(names: list[str]) -> int:
    unknown = [n for n in names if n not in MODULES and n != "templates"]
    if unknown or not names:
        print(f"modules: {', '.join([*MODULES, 'templates'])}", file=sys.stderr)
        return 2
    for name in names:
        summary = run_module(name)
        print(json.dumps({k: summary[k] for k in ("module", "killed", "total", "score")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
