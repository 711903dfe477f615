"""``python -m trace_check.cli``: the same as the ``txconform`` command."""

import sys

from trace_check.cli.main import main

sys.exit(main())
