"""`python -m dflow.cli ...`: the `dflow` command without the installed console script."""

import sys

from . import main

sys.exit(main())
