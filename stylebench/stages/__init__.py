"""The stages: respond and the stages after it (transcribe, features, probe, caption, judge),
declared as data in :mod:`.registry` (``STAGES``), and the runner (:mod:`.runner`) that hands
each stage's records to the next. Their machinery is :mod:`stylebench.pipeline`."""
