"""The high-availability-config webhook spec (../shared/spec/ha-config-webhook.md).

Keys, payload types, the facts the webhook reads, the registration (§3).
"""

__all__: list[str] = []
