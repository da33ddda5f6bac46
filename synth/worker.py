"""Moved to :mod:`stylebench.model_wrappers.worker.synth` (it builds on the model worker).

This re-export keeps ``stylebench.synth.worker`` importable until ``cli/build_dialogues.py``
imports the new place; it is the one synth module allowed to import the model layer
(tests/test_imports.py, ``LAYER_EXCEPTIONS``). Delete it then.
"""

from stylebench.model_wrappers.worker.synth import ADAPTER, SynthModel, WorkerSynth

__all__ = ["ADAPTER", "SynthModel", "WorkerSynth"]
