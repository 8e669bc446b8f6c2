"""``python -m zoneproof.components.reference.ha_config``: the webhook process (see ``cli``)."""

import sys

from zoneproof import errors
from zoneproof.components.reference.ha_config import cli

try:
    sys.exit(cli.main())
except errors.ZoneproofError as exc:
    print(f"ha_config: error: {exc}", file=sys.stderr)
    sys.exit(2)
