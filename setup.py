"""Build hook (metadata lives in pyproject.toml): the wheel carries the Hydra configs.

The top-level `skill_configs/` stays the place users edit in a clone; at build time it is
mapped into the package as `rearrange.skill_configs` (its yaml files are package-data, see
pyproject.toml), so an installed wheel finds its configs (rearrange.config.find_config_dir).
"""

from setuptools import find_namespace_packages, find_packages, setup

CONFIG_PACKAGES = [
    "rearrange.skill_configs",
    *(f"rearrange.skill_configs.{p}" for p in find_namespace_packages(where="skill_configs")),
]

setup(
    packages=[*find_packages(include=["rearrange", "rearrange.*"]), *CONFIG_PACKAGES],
    package_dir={"rearrange.skill_configs": "skill_configs"},
)
