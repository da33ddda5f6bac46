"""``python -m stylebench.cli``: the same as the ``stylebench`` command."""

import sys

from stylebench.cli import main

sys.exit(main())
