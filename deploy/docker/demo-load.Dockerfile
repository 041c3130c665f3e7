# The demo profile's load: sysbench's OLTP mix and a burst of failed logins against the demo
# Percona Server (demo-load beside this file). Debian's sysbench and MariaDB client.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends sysbench mariadb-client \
 && rm -rf /var/lib/apt/lists/*
COPY demo-load /usr/local/bin/demo-load
CMD ["demo-load"]
