"""auditpipe: MySQL-family audit logs to compliance evidence.

The command-line entry point (``./auditpipe``) for the local stack, the workload generator,
the demo and ad-hoc queries. See README.md and docs/.
"""

__version__ = "0.1.0"
