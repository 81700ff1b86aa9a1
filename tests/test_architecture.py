"""The shape of the code: store concerns with one name per question, backends true to their contracts, no import cycles, short functions, SQL only in the store."""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from papersift.plugins import plugins
from papersift.store import open_store
from papersift.store.contracts import CONCERNS, Store
from tests.test_store_contract import BACKENDS

SRC = Path(__file__).resolve().parents[1] / "src" / "papersift"
MAX_FUNCTION_LINES = 60


def _public(cls: type) -> set[str]:
    """Public methods, inherited ones included (a backend's class may extend a shared one)."""
    return {name for klass in cls.__mro__
            if klass.__module__.startswith("papersift.") and klass.__name__ != "Concern"
            for name, value in vars(klass).items()
            if not name.startswith("_") and callable(value)}


def _backend_concern_classes(store: Store) -> dict[str, type]:
    return {name: type(getattr(store, name)) for name in CONCERNS}


BACKEND_NAMES = [p.name for p in plugins().stores]


@pytest.fixture(params=BACKEND_NAMES)
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A store of each registered backend (opened where the contract suite opens one)."""
    assert request.param in BACKENDS, (
        f"store backend {request.param!r} has no location in tests/test_store_contract.py")
    with open_store(BACKENDS[request.param](request, tmp_path)) as store:
        yield store


def test_every_registered_backend_runs_the_contract_suite() -> None:
    assert set(BACKENDS) == set(BACKEND_NAMES)
    assert BACKEND_NAMES == ["sqlite", "postgresql"]


def test_no_public_name_is_defined_by_two_concerns(any_store: Store) -> None:
    for classes in (CONCERNS, _backend_concern_classes(any_store)):
        owner: dict[str, str] = {}
        for concern, cls in classes.items():
            for name in _public(cls):
                assert name not in owner, f"{name} is defined by {owner[name]} and {concern}"
                owner[name] = concern


def test_every_backend_implements_its_contracts_exactly(any_store: Store) -> None:
    """Each concern is its one shared class on every backend, or a backend's extension of
    it that adds no public method and keeps every method's parameters."""
    assert isinstance(any_store, Store)
    for concern, contract in CONCERNS.items():
        implementation = type(getattr(any_store, concern))
        assert issubclass(implementation, contract), f"{concern}: {implementation}"
        assert _public(implementation) == _public(contract), concern
        for name in _public(contract):
            wanted = list(inspect.signature(getattr(contract, name)).parameters)
            found = list(inspect.signature(getattr(implementation, name)).parameters)
            assert found == wanted, f"{concern}.{name}: {found} != {wanted}"


def test_the_documented_method_counts_are_the_contracts() -> None:
    documented = (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    for contract in CONCERNS.values():
        count = re.search(rf"`{contract.__name__}` \((\d+)\)", documented)
        assert count, f"{contract.__name__} has no row in docs/architecture.md"
        assert int(count.group(1)) == len(_public(contract)), contract.__name__


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def test_no_function_is_longer_than_sixty_lines() -> None:
    long = [f"{path.relative_to(SRC)}:{node.lineno} {node.name} ({length} lines)"
            for path in SRC.rglob("*.py")
            for node in _functions(ast.parse(path.read_text(encoding="utf-8")))
            if (length := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES]
    assert not long, long


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The papersift modules a module imports, at any depth of its code, TYPE_CHECKING-only
    imports included (the plugin loader's deliberate late imports aside: it is how the
    layers below register)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "_builtin_modules":
            skip |= {id(child) for child in ast.walk(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module in modules | {
                m.rsplit(".", 1)[0] for m in modules}:
            subs = {f"{node.module}.{a.name}" for a in node.names} & modules
            found |= subs or ({node.module} & modules)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names} & modules
    return found


def _graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in SRC.rglob("*.py")}
    return {name: _imports(path, set(paths)) - {name} for name, path in paths.items()}


# The layers of docs/architecture.md, lowest first: a module imports only from its own layer
# or those below it (the longest matching prefix places a module).
LAYERS = (
    ("papersift", "papersift.errors", "papersift.clock", "papersift.records",
     "papersift.settings", "papersift.datadir", "papersift.plugins", "papersift.stages",
     "papersift.retries", "papersift.engines", "papersift.latex", "papersift.web.urls"),
    ("papersift.sources",),
    ("papersift.store",),
    ("papersift.ingest", "papersift.search", "papersift.summarize"),
    ("papersift.topics", "papersift.links", "papersift.briefs"),
    ("papersift.readers",),
    ("papersift.recommend",),
    ("papersift.delivery",),
    ("papersift.pipeline",),
    ("papersift.web",),
    ("papersift.cli",),
)


def _layer(module: str) -> int:
    matches = [(len(prefix), i) for i, prefixes in enumerate(LAYERS) for prefix in prefixes
               if module == prefix or module.startswith(prefix + ".")]
    return max(matches)[1]


def test_imports_point_down_the_layers() -> None:
    upward = [f"{module} (layer {_layer(module)}) imports {other} (layer {_layer(other)})"
              for module, imported in sorted(_graph().items()) for other in sorted(imported)
              if _layer(other) > _layer(module)]
    assert not upward, upward


def test_the_layers_are_the_documented_ones() -> None:
    documented = (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    for prefixes in LAYERS:
        for prefix in prefixes[1:] if prefixes[0] == "papersift" else prefixes:
            name = prefix.removeprefix("papersift.").replace(".", "/")
            assert f"`{name}" in documented, f"{name} is not in docs/architecture.md's layers"


def test_no_import_cycles() -> None:
    graph = _graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for other in sorted(graph[name]):
            if state.get(other) == 1:
                cycle = path[path.index(other):] + [other]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if other not in state:
                visit(other, [*path, other])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


@pytest.mark.parametrize("pattern", ["import sqlite3", "SELECT ", "INSERT INTO", "CREATE TABLE"])
def test_only_the_store_speaks_sql(pattern: str) -> None:
    outside = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
               if "store" not in p.relative_to(SRC).parts[:1]
               and pattern in p.read_text(encoding="utf-8")]
    assert not outside, outside
