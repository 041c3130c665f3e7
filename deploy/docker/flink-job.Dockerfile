# The Flink job on the official Flink image: the job jar built from pipelines/ in a Maven stage,
# then copied to /opt/flink/usrlib, where the image's application mode (`standalone-job`) and its
# TaskManagers load it. Build context: the repository root. Versions: .env; on a release's commit
# .env also holds the job jar's SHA-256, and a jar with other bytes fails the build.
ARG MAVEN_IMAGE=maven:3.9-eclipse-temurin-17
ARG FLINK_IMAGE=flink:2.2.0-java17
FROM ${MAVEN_IMAGE} AS build
ARG AUDITPIPE_JOB_JAR_SHA256=
WORKDIR /build
COPY pipelines ./pipelines
COPY schemas ./schemas
COPY deploy/docker/check-job-jar ./
RUN mvn -q -B -f pipelines/pom.xml -DskipTests package \
 && ./check-job-jar pipelines/flink-job/target/auditpipe-flink-job.jar "$AUDITPIPE_JOB_JAR_SHA256"

FROM ${FLINK_IMAGE}
COPY --from=build --chown=flink:flink /build/pipelines/flink-job/target/auditpipe-flink-job.jar /opt/flink/usrlib/auditpipe-flink-job.jar
COPY --chown=flink:flink deploy/docker/auditpipe-jobmanager deploy/docker/auditpipe-flink-entry /opt/auditpipe/
# the mount points of the checkpoints and archive volumes, Flink's: a new named volume takes the
# owner of the image's folder it is mounted on
RUN mkdir -p /flink/checkpoints /flink/archive && chown flink:flink /flink/checkpoints /flink/archive
