"""Record keys: who computed a record and how, as a short stable hash; and a run's identity.

Every stage's fingerprint is built from :func:`fingerprint`; the respond key (:func:`turn_fp`)
is the one that decides whether a model is asked again, so it lives here, small and tested on
its own (tests/test_respond_key.py, and the mutation run: ``make mutation``).
"""

from __future__ import annotations

import functools
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
    return turn_fp_after(turn_key_head(identity, sample), k, prior_shas)


def _json(x: Any) -> str:
    return json.dumps(x, sort_keys=True, default=str, ensure_ascii=False)


@functools.lru_cache(maxsize=1 << 16)
def _sample_json(sample: Sample) -> str:
    """The sample as :func:`turn_fp` hashes it, serialised once per process: ``compare`` plans
    the replies of 13 runs of one set (43K turns each), and ``asdict`` of every sample for every
    turn of every run took more time than reading the replies."""
    return _json(asdict(sample))


def turn_key_prefix(identity: Identity) -> str:
    """What every turn's fingerprint under ``identity`` starts with (a plan's, once)."""
    return f'["respond", {_json(identity.model_fp)}, {_json(asdict(identity.decode))}, '


def turn_key_head(identity: Identity, sample: Sample, prefix: str | None = None) -> str:
    """What every turn's fingerprint of ``sample`` under ``identity`` starts with (for
    :func:`turn_fp_after`; a plan computes it once per sample, not per turn, from its
    :func:`turn_key_prefix`)."""
    return (turn_key_prefix(identity) if prefix is None else prefix) + _sample_json(sample)


def turn_fp_after(head: str, k: int, prior_shas: Sequence[str]) -> str:
    """:func:`turn_fp` of turn ``k`` from its sample's :func:`turn_key_head`: the same bytes
    :func:`fingerprint` hashes (a JSON list is its items' JSON joined by ``", "``)."""
    blob = f"{head}, {_json(k)}, {_json(list(prior_shas))}]"
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:20]
