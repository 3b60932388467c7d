"""``python -m allfives_env.cli`` runs the ``allfives`` command line, as ``python -m allfives_env`` does."""

import sys

from . import main

sys.exit(main())
