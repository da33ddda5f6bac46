"""The base class of the repo-based wrappers: ``check``, the manifest entry, per-turn sampling.

Every repo-based wrapper starts the same way (check ``--model-arg sampling``, make the official
code importable, import it) and describes itself the same way
(:func:`._repo_common.describe_repo_model` over what its :class:`~._repo_common.RepoSpec`
documents). :class:`RepoModel` holds that once; a wrapper keeps its own ``__init__`` signature
(its model arguments) and ``respond``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from stylebench.model_wrappers._repo_common import (
    OFFICIAL,
    RUN,
    RepoSpec,
    arg_choice,
    check_spec,
    describe_repo_model,
    require_code,
    sampling_for,
)
from stylebench.model_wrappers.base import SpeechModel
from stylebench.records import DecodeConfig


class RepoModel(SpeechModel):
    """A model run from its official repository or package, as its :class:`RepoSpec` says.

    A subclass sets ``spec``; its ``__init__`` calls :meth:`open_code` first and sets ``weights``
    (a hub id or a folder, as given) and ``code_revision``. ``describe`` adds
    :meth:`describe_extra` to the shared manifest entry.
    """

    spec: ClassVar[RepoSpec]
    sampling_mode: str
    repo: Path | None
    weights: str
    code_revision: str

    def open_code(self, repo: str | None, sampling: str, subdirs: Sequence[str] = ("",)) -> Any:
        """Check ``sampling``, make ``repo`` importable and import ``spec.import_name``."""
        self.sampling_mode = arg_choice(sampling, "sampling", (OFFICIAL, RUN))
        self.repo, module = require_code(self.spec, repo, subdirs)
        return module

    @classmethod
    def check(cls) -> tuple[str, str]:
        return check_spec(cls.spec, weights="" if cls.spec.local_weights else None)

    def turn_sampling(self, decode: DecodeConfig) -> dict[str, Any]:
        """This turn's sampling settings (the documented ones, or the run's where they map)."""
        spec = self.spec
        return sampling_for(self.sampling_mode, spec.official_sampling, decode, spec.run_mapping)

    def history_note(self) -> str:
        """How earlier turns reach the model, in words (``spec.history`` unless arguments say)."""
        return self.spec.history

    def describe_extra(self) -> dict[str, Any]:
        """What else identifies this model's answers (decoder folders, prompts, modes)."""
        return {}

    def describe(self) -> dict[str, Any]:
        spec = self.spec
        return describe_repo_model(
            spec,
            weights=self.weights,
            code=self.code_revision,
            history=self.history_note(),
            sampling_mode=self.sampling_mode,
            sampling=spec.official_sampling,
            output_sr=spec.output_sr,
            **self.describe_extra(),
        )
