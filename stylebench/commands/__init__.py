"""What a command does, apart from parsing its flags (:mod:`stylebench.cli`): ``run``,
``score``, ``report`` (:mod:`.runs`), the persistence protocol, a run's manifest and scores and
reports, ``measure`` and ``pairs`` on files, ``import-replies``, ``export-set`` and
``caption-eval``."""
