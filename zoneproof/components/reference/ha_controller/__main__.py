"""``python -m zoneproof.components.reference.ha_controller``: see ``cli`` for flags and exit codes."""

from zoneproof.components.reference.ha_controller import cli

raise SystemExit(cli.main())
