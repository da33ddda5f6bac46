"""Speech recognition: transcript types and flags (``transcript``), the Whisper backends
(``backends``) and the offline model folders they load (``offline``)."""
