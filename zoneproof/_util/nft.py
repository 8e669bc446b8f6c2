"""zoneproof's nftables table in a node's network namespace: a network cut made whole in one
transaction and deleted whole on revert (pure argv builders; kind runs them in its node
containers, the node agent in its host's namespaces)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["TABLE", "cut_endpoints_argv", "uncut_argv"]

#: zoneproof's table (family inet: IPv4 and IPv6).
TABLE = "zoneproof"


def cut_endpoints_argv(endpoints: Sequence[tuple[str, int]]) -> list[str]:
    """nft, one transaction: the host's own processes and those ``(address, port)``s exchange
    nothing: what they send there is dropped (output, priority -10: after kube-proxy's DNAT,
    so a Service address that leads there is cut too), and so is what comes back from there
    (input), or a watch opened before the cut would go on bringing its news over a connection
    that can no longer be acknowledged. Forwarded pod traffic is left alone. A table left by
    an earlier cut is replaced."""
    if not endpoints:
        raise ValueError("no address to cut")
    groups: dict[tuple[str, int], list[str]] = {}
    for address, port in endpoints:
        groups.setdefault(("ip6" if ":" in address else "ip", port), []).append(address)
    families = sorted(groups.items(), key=lambda g: (g[0][0] != "ip", g[0][1]))
    rules = [*(f"add rule inet {TABLE} output {family} daddr {{ {', '.join(addresses)} }} "
               f"tcp dport {port} drop" for (family, port), addresses in families),
             *(f"add rule inet {TABLE} input {family} saddr {{ {', '.join(addresses)} }} "
               f"tcp sport {port} drop" for (family, port), addresses in families)]
    chains = [f"add chain inet {TABLE} {hook} {{ type filter hook {hook} priority -10; "
              "policy accept; }" for hook in ("output", "input")]
    commands = [f"add table inet {TABLE}", f"delete table inet {TABLE}",
                f"add table inet {TABLE}", *chains, *rules]
    return ["nft", "; ".join(commands)]


def uncut_argv() -> list[str]:
    """nft, one transaction: remove zoneproof's table (a no-op where there is none)."""
    return ["nft", f"add table inet {TABLE}; delete table inet {TABLE}"]
