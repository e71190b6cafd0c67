"""`python -m thresher` runs the command-line interface."""

import sys

from thresher.cli import main

sys.exit(main())
