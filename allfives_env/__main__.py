"""``python -m allfives_env`` runs the ``allfives`` command line."""

import sys

from .cli import main

sys.exit(main())
