"""agentform: manage an Agent Service workspace as code.

__version__ is the one place the version is written: the package metadata takes it
from here (pyproject.toml, [tool.setuptools.dynamic]) and `agentform --version` prints it.
"""

__version__ = "0.1.0"
