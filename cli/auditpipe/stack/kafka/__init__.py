"""Kafka: the local broker (broker.py), the topics (topics.py), their users' ACLs (kafka_acls.py) and
reading the event stream as a SIEM does (stream.py)."""
