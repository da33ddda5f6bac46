"""Record keys: who computed a record and how, as a short stable hash; and a run's identity.

Every stage's fingerprint is built from :func:`fingerprint`; the respond key (:func:`turn_fp`)
is the one that decides whether a model is asked again, so it lives here, small and tested on
its own (tests/test_respond_key.py, and the mutation run: ``make mutation``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from stylebench.records import DecodeConfig, Sample


def fingerprint(*parts: Any) -> str:
    """A short stable hash of JSON-serialisable parts; names who computed a record and how."""
    blob = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:20]


@dataclass(frozen=True)
class Identity:
    """Who answers: the model as it describes itself, and how it decodes."""

    model: dict[str, Any]
    decode: DecodeConfig

    @staticmethod
    def of(desc: dict[str, Any], decode: DecodeConfig) -> Identity:
        # where the model ran (in process or a worker env) does not change who answered
        return Identity({k: v for k, v in desc.items() if k != "worker"}, decode)

    @property
    def model_fp(self) -> str:
        return fingerprint(self.model)

    @property
    def fp(self) -> str:
        return fingerprint("run", self.model_fp, asdict(self.decode))

    def to_dict(self) -> dict[str, Any]:
        return {"fingerprint": self.fp, "model": self.model, "decode": asdict(self.decode)}


def turn_fp(identity: Identity, sample: Sample, k: int, prior_shas: Sequence[str]) -> str:
    """The fingerprint of turn ``k``: the model, the decode settings, the sample, and the
    sha256 of every earlier reply (the history the model heard)."""
    return fingerprint(
        "respond", identity.model_fp, asdict(identity.decode), asdict(sample), k, list(prior_shas)
    )
