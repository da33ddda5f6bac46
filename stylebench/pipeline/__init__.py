"""The pipeline: one Stage protocol (:mod:`.stage`), the stages (respond, transcribe, features,
probe, judge), the runner that hands each stage's records to the next, and the commands."""
