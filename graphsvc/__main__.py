"""``python -m graphsvc`` is the same as the ``graphsvc`` command."""

import sys

from graphsvc.cli import main

sys.exit(main())
