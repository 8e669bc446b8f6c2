"""``python -m zoneproof.components.ha_controller``: see ``cli`` for flags and exit codes."""

from zoneproof.components.ha_controller import cli

raise SystemExit(cli.main())
