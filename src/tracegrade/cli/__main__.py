"""`python -m tracegrade.cli`."""

import sys

from tracegrade.cli import main

sys.exit(main())
