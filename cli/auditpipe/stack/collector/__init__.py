"""The collector: rsyslog as the local stack runs it (rsyslog.py), the catch-up of what was rotated while
it was down and the rotation watch of what it never reads (catchup.py), and the servers it ships for (fleet.py)."""
