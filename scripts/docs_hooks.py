"""mkdocs hooks (mkdocs.yml ``hooks:``): the repository's own files that docs pages link to.

A page in docs/ links to a file of the repository as it would on a forge, relative to its own
place (``../examples/outside-controller/README.md``). These hooks put the files of ``SHARED``
into the site at their repository paths and rewrite links to reach the same file in the
site (whose root is docs/), so one link works on the forge and on the site, and ``mkdocs
build --strict`` fails when its target is missing.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

__all__ = ["on_files", "on_page_markdown"]

ROOT = Path(__file__).resolve().parents[1]
#: Repository paths whose files join the site (walk-throughs, contracts, samples).
SHARED = ("examples", "chaos/README.md", "conformance/ha_controller/README.md",
          "certification", "kind-configs", "deploy", ".github/workflows", "CONTRIBUTING.md",
          "CHANGELOG.md", "SECURITY.md", "LICENSE")
_SKIP = ("__pycache__", "/tls/")
_LINK = re.compile(r"(\]\()([^)\s#]+)([^)]*\))")


def _shared_files() -> list[str]:
    found: list[str] = []
    for entry in SHARED:
        path = ROOT / entry
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        found += [p.relative_to(ROOT).as_posix() for p in candidates
                  if not any(skip in f"/{p.relative_to(ROOT).as_posix()}" for skip in _SKIP)]
    return found


def on_files(files: Files, config: Any) -> Files:
    """Add the shared repository files at their repository paths."""
    for path in _shared_files():
        if files.get_file_from_path(path) is None:
            shared = File(path, src_dir=str(ROOT), dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"])
            shared.inclusion = InclusionLevel.INCLUDED  # .github/ too
            files.append(shared)
    return files


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    """A link is written relative to its file in the repository; in the site, docs/ is the
    root and the shared files sit at their repository paths: rewrite it to reach the same file."""
    in_docs = Path(page.file.abs_src_path or "").resolve().is_relative_to(ROOT / "docs")
    site_dir = posixpath.dirname(page.file.src_uri)
    repo_dir = posixpath.join("docs", site_dir) if in_docs else site_dir

    def rewrite(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target or target.startswith(("/", "mailto:")):
            return match.group(0)
        in_repo = posixpath.normpath(posixpath.join(repo_dir, target))
        in_site = in_repo.removeprefix("docs/") if in_repo.startswith("docs/") else in_repo
        if files.get_file_from_path(in_site) is None:
            return match.group(0)  # mkdocs --strict names it
        return f"{match.group(1)}{posixpath.relpath(in_site, site_dir or '.')}{match.group(3)}"

    return _LINK.sub(rewrite, markdown)
