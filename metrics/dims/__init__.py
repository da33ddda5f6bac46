"""One module per style dimension, holding everything that defines it (see :mod:`.base`)."""
