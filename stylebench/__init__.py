"""stylebench: does a speech-to-speech model follow spoken style instructions across turns?

Importing this package is cheap: no torch, no model, no audio library is loaded here.
"""

__version__ = "0.1.0"
