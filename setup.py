"""Only what pyproject.toml cannot say: packages whose import names differ from their
directories, found when the wheel is built (a static list in pyproject.toml would miss every
package added later).

- ``zoneproof``: every directory under zoneproof/, data directories too (namespace packages:
  setuptools then has no package to warn about);
- ``zoneproof_fixtures``: fixtures/, the pytest plugin;
- ``zoneproof_suites``: the suites where they stand at the top of the checkout (the root
  conftest.py and pytest.ini, conformance/, chaos/, deploy/; their data files are listed in
  pyproject.toml), so an installed zoneproof qualifies from any directory
  (``zoneproof._util.locations``).
"""

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

_SKIP = ["*.__pycache__", "*.tls"]
SUITES = find_namespace_packages(include=["conformance", "conformance.*", "chaos", "chaos.*", "deploy"],
                                 exclude=_SKIP)


class BuildPy(build_py):
    """``zoneproof_suites`` is the checkout's top level: of its modules, only conftest.py."""

    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        found = super().find_package_modules(package, package_dir)
        return [m for m in found if package != "zoneproof_suites" or m[1] == "conftest"]


setup(
    packages=[*find_namespace_packages(include=["zoneproof", "zoneproof.*"], exclude=_SKIP),
              "zoneproof_fixtures", "zoneproof_suites", *(f"zoneproof_suites.{p}" for p in SUITES)],
    package_dir={"zoneproof_fixtures": "fixtures", "zoneproof_suites": "."},
    cmdclass={"build_py": BuildPy},
)
