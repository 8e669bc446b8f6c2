"""A webhook already running at an https URL, with the CA bundle that signs its certificate."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TypeVar

from cryptography import x509

from zoneproof import errors
from zoneproof.components.harness.kinds import Kind
from zoneproof.components.harness.option import Option
from zoneproof.components.harness.source import Launcher, Named, Source

__all__ = ["Url"]

T = TypeVar("T")
C = TypeVar("C")


def _bundle_problem(path: Path) -> str | None:
    """Why ``path`` is not a PEM bundle of CA certificates (None: it is)."""
    if not path.is_file():
        return (f"webhook URL needs the PEM CA bundle that signed its serving certificate; "
                f"{path} is not a file")
    try:
        x509.load_pem_x509_certificates(path.read_bytes())
    except (OSError, ValueError) as exc:
        return (f"webhook CA bundle {path} is not PEM certificates ({exc}): give the CA that "
                "signed the webhook's serving certificate, -----BEGIN CERTIFICATE----- ...")
    return None


@dataclass(frozen=True, slots=True)
class Url(Source):
    """A webhook already running at ``url`` whose serving certificate ``ca_bundle`` signs."""

    url: str
    ca_bundle: Path
    name: ClassVar[str] = "url"
    external: ClassVar[bool] = True
    options: ClassVar[tuple[Option, ...]] = (
        Option("url", "{title} under test, already running at this https URL", metavar="URL",
               required=True, selects=True),
        Option("ca_bundle", "the PEM CA that signed the URL's serving certificate",
               metavar="FILE", path=True, required=True))

    @classmethod
    def delivers(cls, kind: Kind) -> bool:
        return kind.spec.serves

    def to_dict(self) -> dict[str, str]:
        return {"url": self.url, "ca_bundle": str(self.ca_bundle)}

    @classmethod
    def from_dict(cls, data: Mapping[str, str], kind: Kind) -> Url:
        return cls(data["url"], Path(data["ca_bundle"]))

    @classmethod
    def from_options(cls, kind: Kind, given: Mapping[str, str], named: Named) -> Url:
        if "ca_bundle" not in given:
            raise errors.ConfigError(f"{named('url')} needs {named('ca_bundle')} FILE (the PEM CA "
                                     "that signed its serving certificate)")
        return cls.from_dict(given, kind)

    def problems(self, kind: Kind) -> list[str]:
        found = []
        if not self.delivers(kind):
            found.append(f"a {kind} cannot be reached by URL: give a command")
        if not self.url.startswith("https://"):
            found.append(f"webhook URL {self.url!r} must be https:// (admission requires TLS)")
        if (bundle := _bundle_problem(self.ca_bundle)) is not None:
            found.append(bundle)
        return found

    def label(self, kind: Kind) -> str:
        return f"{kind} at {self.url}"

    def start(self, component: C, launcher: Launcher[C, T]) -> T:
        return launcher.endpoint(component, self.url, self.ca_bundle.read_bytes())

    def command(self, kind: Kind) -> str:
        raise errors.ConfigError(f"the {self.label(kind)} runs elsewhere: the suite starts no "
                                 "command")
