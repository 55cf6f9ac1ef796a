"""`python -m studio` runs the `resource-studio` command."""

from studio.cli import main

raise SystemExit(main())
