# The auditpipe CLI as an image: the deployment's init service (`auditpipe init`) and, with
# `docker compose run --rm cli ...`, `query`, `report`, `alerts` and `verify` against the
# deployment's store. Build context: the repository root (docker-compose.yml says so). The CLI
# finds schemas/ and dashboards/ beside its code (cli/auditpipe/paths.py), so the checkout's layout
# is kept under /opt/auditpipe and installed in place (editable), as ./auditpipe does.
ARG PYTHON_IMAGE=python:3.12-slim-bookworm
FROM ${PYTHON_IMAGE}
WORKDIR /opt/auditpipe
COPY pyproject.toml auditpipe.yaml ./
COPY cli ./cli
COPY schemas ./schemas
COPY dashboards ./dashboards
# /etc/auditpipe/job, /etc/auditpipe/chain and /etc/auditpipe/links: where init writes the job's
# options and the chain's keys; /var/lib/auditpipe: the state directory; /var/lib/auditpipe-reviews: the review decisions'
# second copy (deploy/compose/auditpipe.yaml). A new named
# volume mounted on a folder takes its owner, so this user can write there
RUN pip install --no-cache-dir --disable-pip-version-check -e . \
 && useradd --system --uid 10001 --home-dir /opt/auditpipe auditpipe \
 && mkdir -p /etc/auditpipe/job /etc/auditpipe/chain /etc/auditpipe/links /var/lib/auditpipe /var/lib/auditpipe-reviews \
 && chown auditpipe:auditpipe /etc/auditpipe/job /etc/auditpipe/chain /etc/auditpipe/links /var/lib/auditpipe /var/lib/auditpipe-reviews
USER auditpipe
ENV PYTHONUNBUFFERED=1
ENTRYPOINT ["auditpipe"]
CMD ["--help"]
