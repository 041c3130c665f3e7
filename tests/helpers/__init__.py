"""What the tests share, imported as ``helpers.<module>`` (pytest puts tests/ on the path: pyproject.toml):
the local stack a test runs (stack.py) and the stacks of the end-to-end and fault suites (e2e_stack.py,
faults_stack.py), the oracle of what a record becomes (oracle.py), and the real programs the tests drive
beside it: Fluentd, MariaDB, a CEF reader, a webhook receiver, the compose deployment's files."""
