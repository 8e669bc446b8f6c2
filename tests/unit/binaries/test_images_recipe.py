"""The components' image recipe: pinned distributions, sources, tags, pip's target, Dockerfiles."""

from __future__ import annotations

import ast
import dataclasses
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from zoneproof import errors
from zoneproof.binaries.images import build, recipe

_STDLIB = set(sys.stdlib_module_names)


def _recipe(**changes: object) -> recipe.Recipe:
    r = recipe.Recipe("bookworm", "http://deb.example/debian", (("kubernetes", "37.0.2"),), "abc")
    return dataclasses.replace(r, **changes)  # type: ignore[arg-type]


# -- the closure of requirements ---------------------------------------------------------------
_REQUIRES = {
    "top": ["mid>=1", "skipme", "win; sys_platform == 'win32'", "opt; extra == 'fast'",
            "leaf[fast]"],
    "mid": ["leaf"],
    "leaf": ["extra-dep; extra == 'fast'"],
    "skipme": ["only-skipped"],
    "extra-dep": [], "win": [], "opt": [], "only-skipped": [],
}


def _closure(roots: tuple[str, ...], skip: tuple[str, ...] = ()) -> dict[str, str]:
    return recipe.requirement_closure(roots, requires=lambda n: _REQUIRES[n.lower()],
                                      version=lambda n: f"{len(n)}.0", skip=skip)


def test_closure_follows_requirements_markers_and_requested_extras() -> None:
    found = _closure(("top",))
    assert set(found) == {"top", "mid", "leaf", "extra-dep", "skipme", "only-skipped"}
    assert found["mid"] == "3.0"


def test_closure_leaves_out_skipped_distributions_and_what_only_they_need() -> None:
    assert "only-skipped" not in _closure(("top",), skip=("SkipMe",))


def _pinned() -> dict[str, str]:
    return recipe.requirement_closure(recipe.RUNTIME_DISTRIBUTIONS, requires=metadata.requires,
                                      version=metadata.version, skip=recipe.NOT_AT_RUNTIME)


def test_real_closure_pins_the_installed_versions_without_the_asyncio_client() -> None:
    pins = _pinned()
    assert pins["kubernetes"] == metadata.version("kubernetes")
    assert pins["pyyaml"] == metadata.version("PyYAML")
    assert "aiohttp" not in pins and "pytest" not in pins


# -- what the components import is in the image ------------------------------------------------
def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at module level or inside functions (absolute names)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def _module_names(files: list[Path]) -> set[str]:
    root = recipe.PACKAGE_ROOT
    return {".".join(("zoneproof", *p.relative_to(root).with_suffix("").parts))
            .removesuffix(".__init__") for p in files}


def _missing(sources: tuple[str, ...], distributions: set[str]) -> list[str]:
    """Imports of the image's zoneproof files that the image would not hold."""
    root = recipe.PACKAGE_ROOT
    files = [p for entry in sources
             for p in ((root / entry).rglob("*.py") if (root / entry).is_dir() else [root / entry])
             if p.suffix == ".py" and p.name not in recipe.NOT_SHIPPED]
    shipped = _module_names(files)
    modules = _module_names(list(root.rglob("*.py")))
    providers = metadata.packages_distributions()
    problems = []
    for path in files:
        for name in sorted(_imports(path)):
            top = name.split(".")[0]
            if top == "zoneproof":
                if name == "zoneproof.chaos" or name.startswith("zoneproof.chaos."):
                    continue  # zoneproof.discover(): chaostoolkit's entry point, never run in an image
                module = name if name in modules else name.rsplit(".", 1)[0]  # or an attribute
                if module not in shipped:
                    problems.append(f"{path.name}: {name}")
            elif top not in _STDLIB and top != "__future__":
                dists = {d.lower().replace("_", "-") for d in providers.get(top, [top])}
                if not dists & distributions:
                    problems.append(f"{path.name}: {name} (distribution {sorted(dists)})")
    return problems


def test_the_image_holds_every_module_the_components_import() -> None:
    assert _missing(recipe.ZONEPROOF_SOURCES, set(_pinned())) == []


def test_a_source_left_out_of_the_image_is_caught() -> None:
    sources = tuple(s for s in recipe.ZONEPROOF_SOURCES if s != "specs")
    assert any("zoneproof.specs" in p for p in _missing(sources, set(_pinned())))


def test_a_zoneproof_module_left_out_of_the_image_is_caught() -> None:
    sources = tuple(s for s in recipe.ZONEPROOF_SOURCES if s != "_util/jsonlog.py")
    assert any("zoneproof._util.jsonlog" in p for p in _missing(sources, set(_pinned())))


def test_a_distribution_left_out_of_the_image_is_caught() -> None:
    assert any("yaml" in p for p in _missing(recipe.ZONEPROOF_SOURCES, set(_pinned()) - {"pyyaml"}))


def test_zoneproof_files_are_sources_only() -> None:
    files = recipe.zoneproof_files()
    assert all("__pycache__" not in f.parts for f in files)
    assert recipe.PACKAGE_ROOT / "components/reference/ha_controller/cli.py" in files
    assert not any("harness" in f.parts or "chaos" in f.parts for f in files)
    assert not any(f.name in recipe.NOT_SHIPPED for f in files)


# -- names, hash, Dockerfiles, pip --------------------------------------------------------------
def test_hash_follows_pins_and_sources_but_the_base_only_debian() -> None:
    r = _recipe()
    assert r.hash == _recipe().hash and len(r.hash) == 12
    assert _recipe(distributions=(("kubernetes", "37.0.3"),)).hash != r.hash
    assert _recipe(sources="other").hash != r.hash
    assert _recipe(sources="other").base_ref == r.base_ref
    assert _recipe(suite="trixie").base_ref != r.base_ref


def test_images_are_named_per_component_and_tagged_by_hash() -> None:
    r = _recipe()
    assert r.refs == {"ha-config-webhook": f"localhost/zoneproof/ha-config-webhook:{r.hash}",
                      "ha-controller": f"localhost/zoneproof/ha-controller:{r.hash}",
                      "node-agent": f"localhost/zoneproof/node-agent:{r.hash}"}
    assert r.ref("ha-controller", recipe.DEFAULT_TAG).endswith(f":{metadata.version('zoneproof')}")


def test_deploy_names_the_images_the_build_tags() -> None:
    deploy = recipe.PACKAGE_ROOT.parent / "deploy"
    top = yaml.safe_load((deploy / "kustomization.yaml").read_text())
    assert {i["name"]: i["newTag"] for i in top["images"]} == {
        recipe.REPOSITORIES[c]: recipe.DEFAULT_TAG for c in recipe.COMPONENTS}
    agent = yaml.safe_load((deploy / "node-agent" / "kustomization.yaml").read_text())
    assert agent["images"] == [{"name": recipe.REPOSITORIES["node-agent"],
                                "newTag": recipe.DEFAULT_TAG}]
    daemonset = yaml.safe_load((deploy / "node-agent" / "daemonset.yaml").read_text())
    assert daemonset["spec"]["template"]["spec"]["containers"][0]["image"] == \
        f"{recipe.REPOSITORIES['node-agent']}:{recipe.DEFAULT_TAG}"
    for component in recipe.COMPONENTS:
        repo = recipe.REPOSITORIES[component]
        deployment = yaml.safe_load((deploy / component / "deployment.yaml").read_text())
        assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == \
            f"{repo}:{recipe.DEFAULT_TAG}"


def test_dockerfiles_run_non_root_writing_nothing() -> None:
    text = recipe.components_dockerfile("base:1")
    assert text.startswith("FROM base:1\n")
    assert f"USER {recipe.RUN_AS}\n" in text and not recipe.RUN_AS.startswith("0")
    assert "PYTHONDONTWRITEBYTECODE=1" in text and "compileall" in text
    entry = recipe.entry_dockerfile("components:1", "ha-controller")
    assert entry == ('FROM components:1\n'
                     'ENTRYPOINT ["python3", "-m", "zoneproof.components.reference.ha_controller"]\n')
    assert recipe.entry_dockerfile("components:1", "node-agent") == (
        'FROM components:1\nUSER 0:0\nENTRYPOINT ["python3", "-m", "zoneproof.nodeagent"]\n')


def test_wheel_platforms_cover_every_manylinux_the_glibc_runs() -> None:
    tags = build.wheel_platforms((2, 36), "x86_64")
    assert tags[0] == "manylinux_2_36_x86_64" and tags[-1] == "manylinux1_x86_64"
    assert {"manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux2010_x86_64"} <= set(tags)
    with pytest.raises(errors.BinaryError, match="no manylinux"):
        build.wheel_platforms((3, 0), "x86_64")


def test_pip_installs_pinned_wheels_for_the_images_interpreter(tmp_path: Path) -> None:
    argv = build.pip_install_argv(["a==1"], tmp_path, (3, 11), ["manylinux_2_36_x86_64"])
    assert argv[:4] == [sys.executable, "-m", "pip", "install"]
    for flag in ("--no-deps", "--only-binary=:all:", "--no-compile"):
        assert flag in argv
    assert argv[argv.index("--python-version") + 1] == "3.11"
    assert argv[argv.index("--abi") + 1] == "cp311"
    assert argv[argv.index("--target") + 1] == str(tmp_path)
    assert argv[-1] == "a==1"
