"""`python -m resources_qt.bus ...`: the notify command without the studio's dispatcher."""

import sys

from resources_qt.bus.cli import notify_main

sys.exit(notify_main(sys.argv[1:]))
