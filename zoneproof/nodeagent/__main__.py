"""``python -m zoneproof.nodeagent``: the node agent; see ``cli``."""

from zoneproof.nodeagent import cli

raise SystemExit(cli.main())
