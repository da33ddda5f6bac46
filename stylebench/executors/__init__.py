"""Executors: where the stages' units of work are computed (serial in this process, or Ray).

The loop (:func:`stylebench.pipeline.stage.run_stage`) stays in the driver and is the only writer
of the run folder; an executor only decides where a unit's records are computed.
"""
