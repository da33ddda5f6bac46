"""Serving a model wrapper from another Python environment (see :mod:`.model`).

The package's interface is :class:`WorkerModel` (a ``SpeechModel`` whose turns run in a worker
process), :func:`worker_statuses` and the errors a run may see; :mod:`.main` is the worker
itself, :mod:`.protocol` the messages, :mod:`.process` one worker process; :mod:`.synth` runs a
synthesiser behind the same worker.
"""

from stylebench.model_wrappers.worker.model import WorkerModel, worker_statuses
from stylebench.model_wrappers.worker.process import WorkerError, WorkerStartError, WorkerTimeout

__all__ = ["WorkerError", "WorkerModel", "WorkerStartError", "WorkerTimeout", "worker_statuses"]
