"""The import structure of every installed package: layers one way, no cycles, no private names
across modules, a light top (docs/architecture.md#layers).

Every ``.py`` file of every folder in ``pyproject.toml``'s ``package-dir`` is read, under the name
it is installed as (``metrics/pitch.py`` is ``stylebench.metrics.pitch``). Imports are read with
:mod:`ast`, and all of them count:

- imports inside functions (lazy) and under ``if TYPE_CHECKING:``: the layering is about what a
  module depends on, and a lazy import is still a dependency (and a cycle through one breaks as
  soon as someone hoists it). Lazy imports of optional heavy third-party packages (torch,
  transformers, ...) are not stylebench modules, so no rule here concerns them;
- registry entries, the string literals ``"stylebench.<module>:<attr>"`` that a ``LazyRegistry``
  imports on lookup: a lower layer reaches an upper one only by being handed a name or an object
  (a registry owned by the upper layer, a parameter), never by naming the upper module itself.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers", "ctranslate2", "pandas")

#: layer -> the modules in it: ``"x"`` is module ``x`` alone, ``"x.*"`` is package ``x`` and every
#: module below it. Every module is in exactly one layer (a new top-level module must be placed).
LAYERS: dict[str, tuple[str, ...]] = {
    # the small base everyone may import: record types and constants, audio I/O, user errors,
    # paths, whole-file writes and the caches' files, the lazy registry, the package itself
    # (``__version__``)
    "base": (
        "stylebench",
        "stylebench.records",
        "stylebench.audio",
        "stylebench.atomic",
        "stylebench.cache_files",
        "stylebench.errors",
        "stylebench.paths",
        "stylebench.registry",
    ),
    # the generic stage machinery, on the base alone: the append-only record store, the stage
    # loop, record keys, audio blobs, progress bars and the executors (serial, Ray), used by the
    # run's stages and by the dialogue-set builder alike
    "machinery": (
        "stylebench.store",
        "stylebench.pipeline",
        "stylebench.pipeline.stage",
        "stylebench.pipeline.blobs",
        "stylebench.pipeline.keys",
        "stylebench.pipeline.progress",
        "stylebench.executors.*",
    ),
    # pure measures (features, ASR, judges, captioners, the dimensions)
    "metrics": ("stylebench.metrics.*",),
    # speech synthesis and audio transforms
    "synth": ("stylebench.synth.*",),
    # the dialogue-set builder and its text pools (speaks user turns with synth)
    "dialogues": ("stylebench.dialogues.*",),
    # speech models behind SpeechModel (the reference model speaks with synth, the shuffled row
    # reads the dialogue pools)
    "models": ("stylebench.model_wrappers.*",),
    # the run's own: config, the run's timings and score settings, scoring, reports
    "core": (
        "stylebench.config",
        "stylebench.caption_config",
        "stylebench.options",
        "stylebench.pipeline.timings",
        "stylebench.pipeline.score_config",
        "stylebench.scoring.*",
        "stylebench.report.*",
    ),
    # the stages, their declaration list (STAGES) and the runner that loops over it
    "stages": ("stylebench.stages.*",),
    # what a command does: run/score/report, persistence, files and pairs, import and export,
    # compare and the listening test
    "commands": (
        "stylebench.commands.*",
        "stylebench.compare.*",
        "stylebench.ratings.*",
    ),
    # the Python API: DataFrames over the run, the measured files and the comparison
    "api": ("stylebench.api",),
    "cli": ("stylebench.cli.*",),
}
#: layer -> the layers its modules may import (their own included)
_BELOW_CORE = {"base", "machinery", "metrics", "synth", "dialogues", "models"}
MAY_IMPORT: dict[str, frozenset[str]] = {
    "base": frozenset({"base"}),
    "machinery": frozenset({"base", "machinery"}),
    "metrics": frozenset({"base", "metrics"}),
    "synth": frozenset({"base", "synth"}),
    # dims own the styles; the machinery makes a set build resumable and distributable
    "dialogues": frozenset({"base", "machinery", "metrics", "synth", "dialogues"}),
    "models": frozenset({"base", "metrics", "synth", "dialogues", "models"}),
    "core": frozenset(_BELOW_CORE | {"core"}),
    "stages": frozenset(_BELOW_CORE | {"core", "stages"}),
    "commands": frozenset(_BELOW_CORE | {"core", "stages", "commands"}),
    "api": frozenset(_BELOW_CORE | {"core", "stages", "commands", "api"}),
    "cli": frozenset(LAYERS),
}
#: (importer, imported) -> why it is allowed for now. Each must still occur: delete the entry
#: with the import.
LAYER_EXCEPTIONS: dict[tuple[str, str], str] = {
    # registry entries only (``stylebench.API``): the package's own names ``stylebench.measure``
    # and the others are the API's functions, imported on first use by the module __getattr__;
    # ``import stylebench`` imports nothing more (test below)
    ("stylebench", "stylebench.api"): "the package's API names, loaded lazily",
}
REGISTRY_ENTRY = re.compile(r"(stylebench(?:\.\w+)*):\w+")


def _package_dirs() -> dict[str, Path]:
    """Installed package name -> its folder (``pyproject.toml``'s ``package-dir``)."""
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return {
        name: REPO / folder for name, folder in cfg["tool"]["setuptools"]["package-dir"].items()
    }


def _files_on_disk() -> list[Path]:
    return sorted({p for folder in _package_dirs().values() for p in folder.rglob("*.py")})


def _modules() -> dict[str, Path]:
    """Installed module name -> file, for every ``.py`` file of every installed package folder."""
    dirs = _package_dirs()
    out: dict[str, Path] = {}
    for path in _files_on_disk():
        # the deepest package folder holding the file (stylebench/ holds no other package's folder
        # today, but a nested one would name its files)
        name, folder = max(
            ((n, f) for n, f in dirs.items() if path.is_relative_to(f)),
            key=lambda nf: len(nf[1].parts),
        )
        parts = list(path.relative_to(folder).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        module = ".".join([name, *parts])
        assert module not in out, f"{path} and {out[module]} are both {module}"
        out[module] = path
    return out


Use = tuple[str, list[str], int, bool]


def _imports(name: str, path: Path, known: set[str]) -> list[Use]:
    """``(module used, names taken from it, line, by a registry entry)`` for every use of a
    stylebench module: ``import``/``from`` statements anywhere in the file, and registry entries.
    A name no module on disk matches is returned as it is written (the caller reports it)."""
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    found: list[Use] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, [], node.lineno, False) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [a.name for a in node.names]
            subs = [f"{base}.{n}" for n in names if f"{base}.{n}" in known]
            found += [(s, [], node.lineno, False) for s in subs]
            rest = [n for n in names if f"{base}.{n}" not in known]
            if rest or not subs:
                found.append((base, rest, node.lineno, False))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if m := REGISTRY_ENTRY.fullmatch(node.value):
                found.append((m.group(1), [], node.lineno, True))
    return [u for u in found if u[0].split(".")[0] == "stylebench" and u[0] != name]


def _graph() -> tuple[dict[str, set[str]], list[str], list[tuple[str, str, int]], list[str]]:
    """The import graph (statements only: a registry names what it loads later, by design in
    the other direction too), private names taken across modules, every use ``(importer,
    imported, line)`` registry entries included, and uses of stylebench modules that do not
    exist."""
    mods = _modules()
    known = set(mods)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    private, edges, missing = [], [], []
    for name, path in mods.items():
        for target, names, line, by_registry in _imports(name, path, known):
            if target not in known:
                missing.append(f"{name}:{line}: {target}")
                continue
            if not by_registry:
                graph[name].add(target)
            edges.append((name, target, line))
            private += [
                f"{name}: from {target} import {n}"
                for n in names
                if n.startswith("_") and not n.endswith("__")
            ]
    return graph, private, edges, missing


def _layer(module: str) -> list[str]:
    """The layers whose patterns match ``module`` (exactly one, for a placed module)."""
    out = []
    for layer, patterns in LAYERS.items():
        for p in patterns:
            pkg = p.removesuffix(".*")
            if module == pkg or (p.endswith(".*") and module.startswith(pkg + ".")):
                out.append(layer)
    return out


def _layer_violations(edges: list[tuple[str, str, int]]) -> tuple[list[str], set[tuple[str, str]]]:
    """Imports the layers forbid (``importer:line (layer) -> imported (layer)``), and the
    ``LAYER_EXCEPTIONS`` entries that were used."""
    bad, used = [], set()
    for src, dst, line in edges:
        (a,), (b,) = _layer(src), _layer(dst)
        if b in MAY_IMPORT[a]:
            continue
        if (src, dst) in LAYER_EXCEPTIONS:
            used.add((src, dst))
            continue
        bad.append(f"{src}:{line} ({a}) -> {dst} ({b})")
    return bad, used


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_every_module_of_every_installed_package_is_checked():
    mods = _modules()
    on_disk = _files_on_disk()
    assert len(mods) == len(on_disk) and set(mods.values()) == set(on_disk)
    # the remapped folders are read under their installed names (metrics/ is stylebench.metrics)
    for pkg in _package_dirs():
        assert pkg in mods, f"{pkg}: no __init__.py read"
    assert len(mods) > 150
    graph, *_ = _graph()
    assert set(graph) == set(mods)


def test_every_module_is_in_exactly_one_layer():
    unplaced = {m: _layer(m) for m in _modules() if len(_layer(m)) != 1}
    assert unplaced == {}, "place each module in one layer of LAYERS (docs/architecture.md#layers)"
    assert set(MAY_IMPORT) == set(LAYERS)
    assert all(layer in allowed for layer, allowed in MAY_IMPORT.items())


def test_the_layer_check_finds_an_upward_import(monkeypatch):
    monkeypatch.setitem(LAYER_EXCEPTIONS, ("stylebench.errors", "stylebench.store"), "a test")
    edges = [
        ("stylebench.metrics.pitch", "stylebench.stages.runner", 3),
        ("stylebench.stages.runner", "stylebench.metrics.pitch", 4),
        ("stylebench.errors", "stylebench.store", 5),
    ]
    bad, used = _layer_violations(edges)
    assert bad == ["stylebench.metrics.pitch:3 (metrics) -> stylebench.stages.runner (stages)"]
    assert used == {("stylebench.errors", "stylebench.store")}


def test_the_import_reader_counts_lazy_imports_and_registry_entries(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text(
        "from stylebench.records import DIMS\n"
        "def f():\n"
        "    from stylebench.stages import runner\n"
        "X = ('a', 'stylebench.scoring.cells:Thresholds')\n"
    )
    known = {"stylebench.records", "stylebench.stages.runner", "stylebench.scoring.cells"}
    assert _imports("stylebench.metrics.m", mod, known) == [
        ("stylebench.records", ["DIMS"], 1, False),
        ("stylebench.stages.runner", [], 3, False),
        ("stylebench.scoring.cells", [], 4, True),
    ]


def test_every_stylebench_import_names_a_module_on_disk():
    *_, missing = _graph()
    assert missing == []


def test_layers_one_way():
    """metrics, synth and model_wrappers never import the pipeline, the stages, the commands,
    scoring, report, compare, ratings, executors or CLI; the base imports nothing above it."""
    _, _, edges, _ = _graph()
    bad, used = _layer_violations(edges)
    assert bad == [], "imports against docs/architecture.md#layers"
    stale = sorted(set(LAYER_EXCEPTIONS) - used)
    assert stale == [], "no longer needed: delete from LAYER_EXCEPTIONS"


@pytest.mark.parametrize("layer", ["metrics", "synth", "models"])
def test_measures_and_models_never_import_the_run(layer):
    assert not MAY_IMPORT[layer] & {"core", "stages", "commands", "api", "cli"}


def test_the_machinery_is_below_the_stages_and_the_stages_below_the_commands():
    """pipeline/ (the stage machinery) never imports a stage, a stage never imports what a
    command does, and a command never imports the API or the CLI that parses its flags."""
    assert not MAY_IMPORT["machinery"] - {"base", "machinery"}
    assert not MAY_IMPORT["core"] & {"stages", "commands", "api", "cli"}
    assert not MAY_IMPORT["stages"] & {"commands", "api", "cli"}
    assert not MAY_IMPORT["commands"] & {"api", "cli"}
    assert _layer("stylebench.pipeline.stage") == ["machinery"]
    assert _layer("stylebench.pipeline.timings") == ["core"]
    assert _layer("stylebench.stages.registry") == ["stages"]
    assert _layer("stylebench.commands.runs") == ["commands"]


def test_records_dims_are_the_dims_registry_in_order():
    """records (base) cannot import metrics.dims, so ``DIMS`` is a literal kept in step."""
    from stylebench.metrics.dims.base import DIMENSIONS
    from stylebench.records import DIMS

    assert DIMS == tuple(DIMENSIONS)
    from stylebench.metrics.dims.base import dimension
    from stylebench.records import ACOUSTIC_DIMS

    assert tuple(d for d in DIMS if dimension(d).in_all) == ACOUSTIC_DIMS


def test_no_import_cycles_among_stylebench_modules():
    graph, *_ = _graph()
    assert _cycles(graph) == []


def test_no_private_names_imported_across_modules():
    _, private, _, _ = _graph()
    assert private == []


def test_importing_the_package_and_cli_loads_no_heavy_library():
    code = (
        "import json, sys\n"
        "import stylebench, stylebench.cli\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_the_package_names_the_api_and_loads_it_only_on_use():
    code = (
        "import json, sys\n"
        "import stylebench\n"
        "before = 'stylebench.api' in sys.modules\n"
        "f = stylebench.measure\n"
        "print(json.dumps([before, f.__module__, 'pandas' in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [False, "stylebench.api", False]
    import stylebench

    for name, entry in stylebench.API.items():
        module, attr = entry.split(":")
        assert getattr(stylebench, name) is getattr(__import__(module, fromlist=[attr]), attr)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        stylebench.nope  # noqa: B018
