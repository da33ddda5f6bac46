"""stylebench: does a speech-to-speech model follow spoken style instructions across turns?

Importing this package is cheap: no torch, no pandas, no model, no audio library is loaded here.
The Python API's functions (:mod:`stylebench.api`) are names of this package, loaded with their
module on first use: ``stylebench.load_run``, ``stylebench.measure``, ``stylebench.pairs`` and
``stylebench.compare_runs`` (``stylebench.compare`` is the package of the compare command).
"""

__version__ = "0.1.0"

#: the package's API names -> where each lives, imported on first use (module ``__getattr__``)
API = {
    "load_run": "stylebench.api:load_run",
    "measure": "stylebench.api:measure",
    "pairs": "stylebench.api:pairs",
    "compare_runs": "stylebench.api:compare",
}

__all__ = ["__version__", *API]


def __getattr__(name: str) -> object:
    if name not in API:
        raise AttributeError(f"module 'stylebench' has no attribute {name!r}")
    import importlib

    module, attr = API[name].split(":")
    return getattr(importlib.import_module(module), attr)


def __dir__() -> list[str]:
    return sorted([*globals(), *API])
