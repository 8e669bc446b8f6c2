"""Behaviour flags of the webhook and the named, deliberately broken variants ("mutants").

The defaults of ``Behaviour`` are the reference (spec-conformant) behaviour. Each broken
variant flips exactly one flag, so each conformance rule has a wrong webhook proving the
suite can fail. Selection flags change the rendered MutatingWebhookConfiguration
(``selection`` gives its knobs); the others change the handler or companion.
"""

from __future__ import annotations

from dataclasses import dataclass

from zoneproof.components.reference import _variants
from zoneproof.specs.ha_config import keys, registration

__all__ = ["REFERENCE", "VARIANTS", "Behaviour", "Variant", "get_variant", "selection"]


@dataclass(frozen=True, slots=True)
class Behaviour:
    """What the webhook does; every default is the correct behaviour."""

    # Selection (the webhook configuration)
    select_consider_label: bool = True
    """namespaceSelector requires ``consider=true``."""
    select_skip_label: bool = True
    """objectSelector excludes objects carrying the ``skip`` label."""
    mutate_on_update: bool = True
    """The rules list UPDATE as well as CREATE."""
    # Replicas (§5, §6)
    controller_reduction: bool = True
    """``ftt=""`` and type ``controller`` give 1 replica."""
    replicas_offset: int = 0
    """Added to the table value (off-by-one when 1)."""
    type_from_object: bool = True
    """The type label is read from the object's labels, not the pod template's."""
    respect_hpa: bool = True
    """An HPA-scaled workload is only scaled up."""
    scale_down: bool = True
    """A workload without HPA is also scaled down."""
    deny_bad_replicas: bool = True
    """A non-integer replicas annotation denies (False: silently use the table)."""
    hpa_keep_higher_min: bool = True
    """An HPA's minReplicas is never lowered."""
    hpa_raise_max: bool = True
    """maxReplicas is raised when below minReplicas."""
    # Node affinity (§7)
    pin_on_empty_ftt: bool = True
    """``ftt=""`` (present but empty) enables zone pinning."""
    sort_zones: bool = True
    """Zones in the requirement are sorted."""
    merge_affinity_terms: bool = True
    """The zone requirement is merged into each term (False: terms are replaced)."""
    # Topology spread constraints (§8)
    zone_key: str = keys.TOPOLOGY_ZONE
    """topologyKey of the zone constraint."""
    zone_min_domains: bool = True
    """The zone constraint carries minDomains."""
    single_node_relax: bool = True
    """On a single-Node cluster the hostname constraint is ScheduleAnyway."""
    empty_ftt_strict: bool = False
    """Broken when True: ``ftt=""`` makes the hostname constraint DoNotSchedule."""
    zone_spread_any_ftt: bool = False
    """Broken when True: the zone constraint ignores ``ftt`` (only nZones > 1 counts)."""
    min_domains_hpa_max: bool = True
    """minDomains use the HPA's maxReplicas when HPA-scaled."""
    keep_other_tscs: bool = True
    """User constraints with other topology keys are kept."""
    spread_min_replicas: int = 2
    """Constraints are computed from this many replicas on."""
    keep_stale_tscs: bool = True
    """With replicas <= 1 existing constraints stay as they are."""
    deployment_template_labels: bool = True
    """Deployments select on the template labels (False: on spec.selector)."""
    match_label_keys: bool = True
    """Deployments' constraints get ``matchLabelKeys: [pod-template-hash]``."""
    match_label_keys_statefulsets: bool = False
    """Broken when True: StatefulSets get matchLabelKeys too."""
    # Tolerations (§9) and companion (§11)
    tolerations: bool = True
    """Default not-ready/unreachable tolerations are added when configured."""
    companion: bool = True
    """The node controller re-triggers mutation when the Node count crosses 1."""


Variant = _variants.Variant[Behaviour]


REFERENCE = Variant("reference", "nothing: the spec-conformant webhook", Behaviour())

_BROKEN = (
    Variant("ignores-namespace-label", "namespaceSelector without consider=true: every namespace",
            Behaviour(select_consider_label=False)),
    Variant("mutates-skipped", "objectSelector without the skip label: skipped objects mutated",
            Behaviour(select_skip_label=False)),
    Variant("create-only", "registered for CREATE only: UPDATEs are not recomputed",
            Behaviour(mutate_on_update=False)),
    Variant("controller-gets-two", "ftt=\"\" controllers get 2 replicas instead of 1",
            Behaviour(controller_reduction=False)),
    Variant("replicas-off-by-one", "the replica table gives one more (3 instead of 2)",
            Behaviour(replicas_offset=1)),
    Variant("type-from-template", "reads the type label from the pod template, not the object",
            Behaviour(type_from_object=False)),
    Variant("scales-down-hpa-workloads", "sets replicas of HPA-scaled workloads even downwards",
            Behaviour(respect_hpa=False)),
    Variant("never-scales-down", "only raises replicas, also without an HPA",
            Behaviour(scale_down=False)),
    Variant("ignores-bad-replicas", "an invalid replicas annotation is ignored, not denied",
            Behaviour(deny_bad_replicas=False)),
    Variant("lowers-hpa-min", "sets HPA minReplicas to the computed value even when higher",
            Behaviour(hpa_keep_higher_min=False)),
    Variant("keeps-hpa-max", "never raises HPA maxReplicas (max < min remains)",
            Behaviour(hpa_raise_max=False)),
    Variant("no-pinning-on-empty-ftt", "ftt=\"\" does not enable zone pinning",
            Behaviour(pin_on_empty_ftt=False)),
    Variant("unsorted-zones", "zone requirement values in annotation order",
            Behaviour(sort_zones=False)),
    Variant("replaces-affinity", "replaces nodeSelectorTerms instead of merging into each term",
            Behaviour(merge_affinity_terms=False)),
    Variant("wrong-zone-key", "zone constraint on failure-domain.beta.kubernetes.io/zone",
            Behaviour(zone_key="failure-domain.beta.kubernetes.io/zone")),
    Variant("missing-zone-min-domains", "zone constraint without minDomains",
            Behaviour(zone_min_domains=False)),
    Variant("strict-on-single-node", "DoNotSchedule hostname constraint on a single-Node cluster",
            Behaviour(single_node_relax=False)),
    Variant("strict-for-empty-ftt", "DoNotSchedule hostname constraint where ftt=\"\" wants ScheduleAnyway",
            Behaviour(empty_ftt_strict=True)),
    Variant("zone-spread-any-ftt", "zone constraint for ftt=node and ftt=\"\" too",
            Behaviour(zone_spread_any_ftt=True)),
    Variant("min-domains-ignore-hpa", "minDomains from replicas only, ignoring the HPA maximum",
            Behaviour(min_domains_hpa_max=False)),
    Variant("drops-user-tscs", "drops user constraints with other topology keys",
            Behaviour(keep_other_tscs=False)),
    Variant("spreads-single-replica", "adds constraints for 1 replica too",
            Behaviour(spread_min_replicas=1)),
    Variant("clears-stale-tscs", "removes hostname/zone constraints when replicas <= 1",
            Behaviour(keep_stale_tscs=False)),
    Variant("deployment-spec-selector", "Deployments select on spec.selector, not template labels",
            Behaviour(deployment_template_labels=False)),
    Variant("no-match-label-keys", "forgets matchLabelKeys [pod-template-hash] on Deployments",
            Behaviour(match_label_keys=False)),
    Variant("match-label-keys-on-statefulsets", "adds matchLabelKeys to StatefulSets too",
            Behaviour(match_label_keys_statefulsets=True)),
    Variant("no-tolerations", "never adds the default not-ready/unreachable tolerations",
            Behaviour(tolerations=False)),
    Variant("no-companion", "no node controller: objects keep ScheduleAnyway after a Node joins",
            Behaviour(companion=False)),
)

VARIANTS: dict[str, Variant] = {v.name: v for v in (REFERENCE, *_BROKEN)}


def get_variant(name: str) -> Variant:
    """The variant called ``name``; ConfigError lists the valid names."""
    return _variants.lookup(VARIANTS, name, "webhook variant")


def selection(variant: Variant) -> registration.Selection:
    """The registration's selection knobs of ``variant`` (the spec's for the reference)."""
    b = variant.behaviour
    return registration.Selection(consider_label=b.select_consider_label,
                                  skip_label=b.select_skip_label, on_update=b.mutate_on_update)
