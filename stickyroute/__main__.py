"""`python -m stickyroute ...`: the `stickyroute` command."""

import sys

from stickyroute.cli import main

sys.exit(main())
