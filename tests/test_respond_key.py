"""The respond key, on its own (fast, for the mutation run): what a turn's fingerprint covers."""

from __future__ import annotations

from stylebench.pipeline.keys import Identity, turn_fp
from stylebench.records import DecodeConfig, Sample, UserTurn


def sample(**kw) -> Sample:
    turns = tuple(UserTurn(f"request {k}", f"u{k}.wav", 16000, f"h{k}") for k in (1, 2, 3))
    return Sample(
        **{
            "id": "s1",
            "set_version": "v",
            "dim": "pitch",
            "direction": "intensify",
            "lang": "en",
            "voice": "en-f1",
            "content": "c",
            "turns": turns,
            **kw,
        }
    )


def test_every_part_of_the_key_changes_it():
    ident = Identity.of({"name": "m", "revision": "1"}, DecodeConfig())
    base = turn_fp(ident, sample(), 2, ["sha1"])
    changed = {
        "model": turn_fp(
            Identity.of({"name": "m", "revision": "2"}, DecodeConfig()), sample(), 2, ["sha1"]
        ),
        "temperature": turn_fp(
            Identity.of({"name": "m", "revision": "1"}, DecodeConfig(temperature=0.5)),
            sample(),
            2,
            ["sha1"],
        ),
        "top_p": turn_fp(
            Identity.of({"name": "m", "revision": "1"}, DecodeConfig(top_p=0.9)),
            sample(),
            2,
            ["sha1"],
        ),
        "max_new_tokens": turn_fp(
            Identity.of({"name": "m", "revision": "1"}, DecodeConfig(max_new_tokens=5)),
            sample(),
            2,
            ["sha1"],
        ),
        "seed": turn_fp(
            Identity.of({"name": "m", "revision": "1"}, DecodeConfig(seed=3)), sample(), 2, ["sha1"]
        ),
        "sample": turn_fp(ident, sample(content="other"), 2, ["sha1"]),
        "turn": turn_fp(ident, sample(), 3, ["sha1"]),
        "earlier reply": turn_fp(ident, sample(), 2, ["sha2"]),
    }
    assert all(v != base for v in changed.values()), changed
    assert len(set(changed.values())) == len(changed)
    assert turn_fp(ident, sample(), 2, ["sha1"]) == base  # deterministic


def test_where_the_model_ran_is_not_part_of_its_identity():
    here = Identity.of({"name": "m", "worker": {"python": "/env/bin/python"}}, DecodeConfig())
    there = Identity.of({"name": "m", "worker": {"python": "/other/bin/python"}}, DecodeConfig())
    assert here.fp == there.fp and here.model_fp == there.model_fp
    assert Identity.of({"name": "m"}, DecodeConfig(seed=1)).fp != here.fp
    # every other field is kept, whatever its name sorts like
    assert Identity.of({"name": "m", "zeta": 1}, DecodeConfig()).fp != here.fp
    assert Identity.of({"name": "m", "alpha": 1}, DecodeConfig()).fp != here.fp


def test_fingerprints_are_stable_and_ignore_dict_order():
    from stylebench.pipeline.keys import fingerprint

    a = fingerprint({"b": 1, "a": [1, {"y": 2, "x": 3}]}, "s")
    assert a == fingerprint({"a": [1, {"x": 3, "y": 2}], "b": 1}, "s")
    assert len(a) == 20 and int(a, 16) >= 0
    assert a == "eb1f81f60fe6f3c9dbdd"  # pinned: a change here re-asks every model of every run
    assert fingerprint("语速慢一点", {"é": 1}) == "384241ddd15c63e86f0b"  # Mandarin keys too


def test_the_key_is_the_hash_of_its_parts_whatever_the_text():
    """A plan keys a sample's turns from one serialisation of the sample (turn_key_head); the
    key stays the hash of the parts as fingerprint() lays them out, for any text."""
    from dataclasses import asdict

    from stylebench.pipeline.keys import fingerprint, turn_fp_after, turn_key_head

    odd = 'quote " backslash \\ 中文 ✓ \n tab\t'
    ident = Identity.of(
        {"name": odd, "revision": "1", "nested": {"b": 1, "a": [1.5]}}, DecodeConfig()
    )
    for s in (sample(), sample(content=odd, voice="zh-f1", lang="zh", emotion="happy")):
        head = turn_key_head(ident, s)
        for k, prior in ((1, []), (2, ["a" * 64]), (3, ["a" * 64, odd])):
            plain = fingerprint(
                "respond", ident.model_fp, asdict(ident.decode), asdict(s), k, list(prior)
            )
            assert turn_fp(ident, s, k, prior) == turn_fp_after(head, k, prior) == plain
