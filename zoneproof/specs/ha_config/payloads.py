"""Raw JSON payload types: JSON values, AdmissionReview request/response, JSON Patch ops."""

from __future__ import annotations

from typing import Literal, NotRequired, TypeAlias, TypedDict

__all__ = [
    "AdmissionResponse",
    "AdmissionReviewOut",
    "GroupVersionKind",
    "JsonObject",
    "JsonValue",
    "PatchOp",
    "Status",
]

JsonValue: TypeAlias = "None | bool | int | float | str | list[JsonValue] | dict[str, JsonValue]"
JsonObject: TypeAlias = dict[str, JsonValue]


class GroupVersionKind(TypedDict):
    """``request.kind`` of an AdmissionReview."""

    group: str
    version: str
    kind: str


class PatchOp(TypedDict):
    """One RFC 6902 operation (``from`` is not used by the handler's own patches)."""

    op: Literal["add", "remove", "replace", "test", "move", "copy"]
    path: str
    value: NotRequired[JsonValue]


class Status(TypedDict):
    """``response.status`` (a metav1.Status subset)."""

    code: int
    reason: NotRequired[str]
    message: NotRequired[str]


class AdmissionResponse(TypedDict):
    """``response`` of an AdmissionReview."""

    uid: str
    allowed: bool
    status: Status
    patchType: NotRequired[Literal["JSONPatch"]]
    patch: NotRequired[str]


class AdmissionReviewOut(TypedDict):
    """The AdmissionReview the webhook answers with."""

    apiVersion: str
    kind: Literal["AdmissionReview"]
    response: AdmissionResponse
