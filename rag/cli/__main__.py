"""`python -m rag.cli` runs the `papertalk` command."""

from rag.cli.main import main

raise SystemExit(main())
