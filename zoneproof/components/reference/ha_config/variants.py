"""Behaviour flags of the webhook and the named, deliberately broken variants ("mutants").

The defaults of ``Behaviour`` are the reference (spec-conformant) behaviour. Each broken
variant flips exactly one flag, so each conformance rule has a wrong webhook proving the
suite can fail; ``kinds`` may narrow the flipped flag to some kinds (a vendor whose
StatefulSet path alone is wrong). ``registration`` is the MutatingWebhookConfiguration the
variant wants (one ``registration.Selection`` knob flipped at most); the other flags change
the handler, its caches or the companion.

Behaviours no variant can show because they equal the spec's: replacing ``maxR = hpaMax
when replicas <= hpaMax`` by ``<`` (at equality both give hpaMax).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from zoneproof.components.reference import _variants
from zoneproof.specs.ha_config import keys, registration

__all__ = ["REFERENCE", "VARIANTS", "Behaviour", "Variant", "get_variant", "selection"]


@dataclass(frozen=True, slots=True)
class Behaviour:
    """What the webhook does; every default is the correct behaviour."""

    kinds: tuple[str, ...] = ()
    """The kinds the flipped flag applies to (empty: every kind); not a flag itself."""
    # Registration (§3) and the handler's own envelope (§4, §10, §15)
    registration: registration.Selection = registration.SPEC
    """The MutatingWebhookConfiguration the variant is registered with."""
    handler_checks_consider: bool = False
    """Broken when True: the handler itself leaves namespaces without ``consider=true`` alone."""
    answer_version: str | None = None
    """The AdmissionReview apiVersion answered (None: the request's)."""
    bad_replicas_code: int = 403
    """HTTP status code of the denial of an invalid replicas annotation."""
    tolerations_patch_op: Literal["add", "replace"] = "add"
    """JSON Patch op that writes absent tolerations (``replace`` needs an existing path)."""
    # Namespace settings and where they are read from (§2, §4)
    ftt_from_labels: bool = False
    """Broken when True: without the annotation, ``ftt`` comes from a namespace label."""
    zones_from_labels: bool = False
    """Broken when True: without the annotation, zones come from a namespace label."""
    host_spread_from_namespace: bool = False
    """Broken when True: host-spread is also read from the namespace's annotations."""
    host_spread_from_template: bool = False
    """Broken when True: host-spread is also read from the pod template's annotations."""
    trim_zones: bool = False
    """Broken when True: zone entries are trimmed (``"b, a"`` gives [a, b])."""
    zones_raw_count: bool = False
    """Broken when True: nZones counts the raw comma-separated entries."""
    pin_empty_zones: bool = False
    """Broken when True: a present but empty zones annotation pins to ``In []``."""
    hpa_cache_deletes: bool = True
    """The HPA cache forgets deleted HPAs."""
    hpa_exact_api_version: bool = True
    """An HPA targets the object only with the exact ``apps/v1`` (False: any ``apps/`` version)."""
    # Replicas (§5, §6)
    controller_reduction: bool = True
    """``ftt=""`` and type ``controller`` give 1 replica."""
    controller_reduction_any_ftt: bool = False
    """Broken when True: a controller gets 1 replica for every present ``ftt`` (node, zone too)."""
    type_case_insensitive: bool = False
    """Broken when True: the type label is compared case-insensitively (``Controller``)."""
    atoi_ascii_only: bool = True
    """The replicas annotation takes ASCII digits only (Go ``Atoi``)."""
    replicas_annotation: bool = True
    """The replicas annotation overrides the table."""
    zero_stays_zero: bool = True
    """0 replicas are left alone (hibernation)."""
    keep_changed_replicas: bool = False
    """Broken when True: an UPDATE that changes spec.replicas (oldObject's differ) keeps them."""
    hpa_raise_capped: bool = False
    """Broken when True: an HPA-scaled workload is raised at most to the HPA's maxReplicas."""
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
    hpa_max_to_want: bool = True
    """A raised maxReplicas becomes ``want`` (False: the resulting minReplicas)."""
    # Node affinity (§7)
    pin_on_empty_ftt: bool = True
    """``ftt=""`` (present but empty) enables zone pinning."""
    sort_zones: bool = True
    """Zones in the requirement are sorted."""
    merge_affinity_terms: bool = True
    """The zone requirement is merged into each term (False: terms are replaced)."""
    pin_beside_preferred: bool = True
    """A node affinity with only preferred terms still gets the required term."""
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
    min_domains_hpa_max_above: bool = False
    """Broken when True: ... even when replicas are above the HPA's maxReplicas."""
    keep_other_tscs: bool = True
    """User constraints with other topology keys are kept."""
    spread_min_replicas: int = 2
    """Constraints are computed from this many replicas on."""
    keep_stale_tscs: bool = True
    """With replicas <= 1 existing constraints stay as they are."""
    match_label_keys_on_kept: bool = False
    """Broken when True: the merge adds matchLabelKeys to the user constraints it keeps, any kind."""
    deployment_template_labels: bool = True
    """Deployments select on the template labels (False: on spec.selector)."""
    match_label_keys: bool = True
    """Deployments' constraints get ``matchLabelKeys: [pod-template-hash]``."""
    match_label_keys_statefulsets: bool = False
    """Broken when True: StatefulSets get matchLabelKeys too."""
    # Tolerations (§9) and companion (§11)
    tolerations: bool = True
    """Default not-ready/unreachable tolerations are added when configured."""
    unreachable_from_not_ready: bool = False
    """Broken when True: with both configured, the unreachable toleration gets the not-ready seconds."""
    companion: bool = True
    """The node controller re-triggers mutation when the Node count crosses 1."""
    companion_at_start: bool = True
    """The node controller reconciles on its first observation (False: only on a change)."""

    def for_kind(self, kind: str) -> Behaviour:
        """The behaviour for requests of ``kind``: this one, or the reference outside ``kinds``."""
        return self if not self.kinds or kind in self.kinds else Behaviour()

    def flags(self) -> dict[str, object]:
        """Every flag by name, the registration's knobs as ``registration.<knob>`` (not ``kinds``)."""
        out: dict[str, object] = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                                  if f.name not in ("kinds", "registration")}
        out |= {f"registration.{f.name}": getattr(self.registration, f.name)
                for f in dataclasses.fields(self.registration)}
        return out


Variant = _variants.Variant[Behaviour]


REFERENCE = Variant("reference", "nothing: the spec-conformant webhook", Behaviour())

_STS = ("StatefulSet",)
Selection = registration.Selection

_BROKEN = (
    Variant("ignores-namespace-label", "namespaceSelector without consider=true: every namespace",
            Behaviour(registration=Selection(consider_label=False))),
    Variant("mutates-skipped", "objectSelector without the skip label: skipped objects mutated",
            Behaviour(registration=Selection(skip_label=False))),
    Variant("create-only", "registered for CREATE only: UPDATEs are not recomputed",
            Behaviour(registration=Selection(on_update=False))),
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
    # issue 15: blind spots of the webhook suite
    Variant("controller-reduced-any-ftt", "a controller gets 1 replica for ftt=node/zone too",
            Behaviour(controller_reduction_any_ftt=True)),
    Variant("statefulset-scales-down-hpa", "HPA-scaled StatefulSets are scaled down",
            Behaviour(respect_hpa=False, kinds=_STS)),
    Variant("statefulset-controller-gets-two", "ftt=\"\" controller StatefulSets get 2 replicas",
            Behaviour(controller_reduction=False, kinds=_STS)),
    Variant("statefulset-ignores-replicas-annotation", "StatefulSets ignore the replicas annotation",
            Behaviour(replicas_annotation=False, kinds=_STS)),
    Variant("statefulset-scales-hibernated", "StatefulSets with 0 replicas are scaled up",
            Behaviour(zero_stays_zero=False, kinds=_STS)),
    Variant("statefulset-drops-user-tscs", "StatefulSets lose user constraints with other keys",
            Behaviour(keep_other_tscs=False, kinds=_STS)),
    Variant("match-label-keys-on-kept-tscs", "the merge adds matchLabelKeys to kept user "
            "constraints of StatefulSets too", Behaviour(match_label_keys_on_kept=True)),
    Variant("unreachable-uses-not-ready-seconds", "the unreachable toleration gets the not-ready "
            "seconds", Behaviour(unreachable_from_not_ready=True)),
    Variant("host-spread-from-namespace", "host-spread also read from the namespace's annotations",
            Behaviour(host_spread_from_namespace=True)),
    Variant("host-spread-from-template", "host-spread also read from the pod template's annotations",
            Behaviour(host_spread_from_template=True)),
    Variant("ftt-from-namespace-label", "failure-tolerance-type also read from a namespace label",
            Behaviour(ftt_from_labels=True)),
    Variant("zones-from-namespace-label", "zones also read from a namespace label",
            Behaviour(zones_from_labels=True)),
    Variant("pins-empty-zones", "a present but empty zones annotation pins to In []",
            Behaviour(pin_empty_zones=True)),
    Variant("skips-affinity-with-preferred", "a node affinity with only preferred terms gets no "
            "required term", Behaviour(pin_beside_preferred=False)),
    Variant("keeps-changed-replicas", "an UPDATE that changes spec.replicas keeps them (reads "
            "oldObject)", Behaviour(keep_changed_replicas=True)),
    Variant("namespace-selector-deployments-only", "two registration entries: StatefulSets and "
            "HPAs selected in every namespace",
            Behaviour(registration=Selection(consider_label_deployments_only=True))),
    Variant("failure-policy-ignore", "registered with failurePolicy Ignore",
            Behaviour(registration=Selection(failure_policy="Ignore"))),
    Variant("match-policy-exact", "registered with matchPolicy Exact",
            Behaviour(registration=Selection(match_policy="Exact"))),
    Variant("side-effects-none-on-dry-run", "registered with sideEffects NoneOnDryRun",
            Behaviour(registration=Selection(side_effects="NoneOnDryRun"))),
    Variant("timeout-30s", "registered with timeoutSeconds 30",
            Behaviour(registration=Selection(timeout_seconds=30))),
    Variant("review-versions-v1-only", "registered with admissionReviewVersions [v1]",
            Behaviour(registration=Selection(review_versions=("v1",)))),
    Variant("reinvocation-if-needed", "registered with reinvocationPolicy IfNeeded",
            Behaviour(registration=Selection(reinvocation_policy="IfNeeded"))),
    Variant("registers-scale-subresource", "registered for the /scale subresources too",
            Behaviour(registration=Selection(scale_subresource=True))),
    Variant("unicode-digit-replicas", "the replicas annotation accepts non-ASCII digits",
            Behaviour(atoi_ascii_only=False)),
    Variant("bad-replicas-400", "an invalid replicas annotation is denied with 400, not 403",
            Behaviour(bad_replicas_code=400)),
    Variant("companion-not-at-start", "the node controller acts only on a change, never at start-up",
            Behaviour(companion_at_start=False)),
    Variant("handler-checks-namespace-label", "the handler itself skips namespaces without "
            "consider=true", Behaviour(handler_checks_consider=True)),
    Variant("hpa-cache-ignores-deletes", "a deleted HPA stays in the cache and keeps scaling",
            Behaviour(hpa_cache_deletes=False)),
    Variant("hpa-any-apps-version", "an HPA targeting apps/v1beta1 (any apps/ version) counts",
            Behaviour(hpa_exact_api_version=False)),
    Variant("hpa-max-from-min", "a raised HPA maxReplicas becomes minReplicas, not want",
            Behaviour(hpa_max_to_want=False)),
    Variant("caps-raise-at-hpa-max", "an HPA-scaled raise is capped at the HPA's maxReplicas",
            Behaviour(hpa_raise_capped=True)),
    Variant("min-domains-hpa-max-above-replicas", "maxR = hpaMax even with replicas above it",
            Behaviour(min_domains_hpa_max_above=True)),
    Variant("raw-zone-count", "nZones counts the raw entries, duplicates and empties included",
            Behaviour(zones_raw_count=True)),
    Variant("replace-absent-tolerations", "absent tolerations written with JSON Patch replace",
            Behaviour(tolerations_patch_op="replace")),
    Variant("type-case-insensitive", "the type label compared case-insensitively",
            Behaviour(type_case_insensitive=True)),
    Variant("trims-zones", "zone entries are trimmed, so \"b, a\" is not refused",
            Behaviour(trim_zones=True)),
    Variant("answers-v1beta1-always", "every review answered as admission.k8s.io/v1beta1",
            Behaviour(answer_version="admission.k8s.io/v1beta1")),
)

VARIANTS: dict[str, Variant] = {v.name: v for v in (REFERENCE, *_BROKEN)}


def get_variant(name: str) -> Variant:
    """The variant called ``name``; ConfigError lists the valid names."""
    return _variants.lookup(VARIANTS, name, "webhook variant")


def selection(variant: Variant) -> registration.Selection:
    """The registration of ``variant`` (the spec's for the reference)."""
    return variant.behaviour.registration
