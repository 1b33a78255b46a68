"""`python -m attention_explorer` behaves exactly like the `attention-explorer` command."""

import sys

from attention_explorer.cli import main

sys.exit(main())
