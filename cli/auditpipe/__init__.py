"""auditpipe: MySQL-family audit logs to compliance evidence.

The command-line entry point (``./auditpipe``) for the local stack, the workload generator,
the demo and ad-hoc queries. See README.md and docs/.
"""

# The release, in semantic versioning: written here only; pyproject.toml reads it, and the Maven
# modules' versions and CHANGELOG.md are checked against it (tests/unit/test_version.py).
__version__ = "0.3.0"
