"""Only what pyproject.toml cannot say: fixtures/ installs as the package ``zoneproof_fixtures``."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["zoneproof", "zoneproof.*"]), "zoneproof_fixtures"],
    package_dir={"zoneproof_fixtures": "fixtures"},
)
