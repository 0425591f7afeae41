"""The version is written once, in agentform.__version__: the installed package's
metadata and `agentform --version` both say it."""

from __future__ import annotations

import importlib.metadata

from click.testing import CliRunner

import agentform
from agentform.cli.main import cli


def test_the_installed_metadata_version_is_agentform_version() -> None:
    assert importlib.metadata.version("agentform") == agentform.__version__


def test_version_option_prints_agentform_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"agentform, version {agentform.__version__}\n"
