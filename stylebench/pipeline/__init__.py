"""The stage machinery: one Stage protocol and its loop (:mod:`.stage`), record keys
(:mod:`.keys`), the files a job reads (:mod:`.blobs`), each invocation's timings (:mod:`.timings`)
and the scoring settings a config gives (:mod:`.score_config`). The stages are in
:mod:`stylebench.stages`, what a command does in :mod:`stylebench.commands`."""
