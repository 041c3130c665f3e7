"""Flink: the job on one local MiniCluster (job.py) or a local cluster (cluster.py), the job's settings
(job_settings.py) and the REST API's mutual TLS (flink_rest.py)."""
