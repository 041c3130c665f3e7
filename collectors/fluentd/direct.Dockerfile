# The direct path's Fluentd (mongo-direct.conf): the official image plus fluent-plugin-mongo, the
# auditpipe_mongo output (plugins/) and Oj for JSON (with the Yajl parser every chunk failed on an
# encoding error). No Kafka plugin: this image writes straight into the store. docs/deployment.md.
FROM fluent/fluentd:v1.17-debian-1
USER root
RUN buildDeps="make gcc g++ libc-dev" \
 && apt-get update && apt-get install -y --no-install-recommends $buildDeps \
 && gem install fluent-plugin-mongo -v '1.6.3' --no-document \
 && gem install oj --no-document \
 && SUDO_FORCE_REMOVE=yes apt-get purge -y --auto-remove $buildDeps \
 && rm -rf /var/lib/apt/lists/* /tmp/* /usr/lib/ruby/gems/*/cache/*.gem \
 && mkdir -p /fluentd/state && chown -R fluent /fluentd/state
COPY fluent.conf mongo-direct.conf run /fluentd/etc/
COPY plugins /fluentd/etc/plugins
USER fluent
ENV AUDITPIPE_STATE_DIR=/fluentd/state AUDITPIPE_OUTPUT=mongo
CMD ["/fluentd/etc/run"]
