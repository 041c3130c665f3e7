package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.flink.sink.MongoBulkSink;
import io.auditpipe.flink.sink.StoreProfileSeeds;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

/**
 * The job as wired writes sessions and baselines (and reads the baselines' seeds) as {@code
 * store.profiles-uri}'s user, and everything else as {@code store.uri}'s (docs/deployment.md).
 */
class ProfilesUserWiringTest {
    static final String JOB = "mongodb://job:pw@store:27017/?authSource=admin";
    static final String PROFILES = "mongodb://profiles:pw@store:27017/?authSource=admin";

    static Configuration options() {
        Configuration options = new Configuration();
        options.set(JobOptions.KAFKA_BOOTSTRAP_SERVERS, "127.0.0.1:9092");
        options.set(JobOptions.STORE_URI, JOB);
        options.set(JobOptions.STORE_PROFILES_URI, PROFILES);
        return options;
    }

    static String uri(Object sink) {
        return ((MongoBulkSink<?>) sink).settings().uri();
    }

    @Test
    void liveShippingWritesSessionsAndBaselinesAsTheProfilesUser() {
        PipelineSinks sinks = JobWiring.sinks(options());
        assertEquals(PROFILES, uri(sinks.sessions().orElseThrow()));
        assertEquals(PROFILES, uri(sinks.baselines().orElseThrow().profiles()));
        assertEquals(PROFILES, ((StoreProfileSeeds) sinks.baselines().orElseThrow().seeds()).uri());
        assertEquals(JOB, uri(sinks.events().orElseThrow()));
        assertEquals(JOB, uri(sinks.evidence()));
        assertEquals(JOB, uri(sinks.stats().orElseThrow()));
    }

    @Test
    void importedHistoryWritesBaselinesAsTheProfilesUser() {
        PipelineSinks sinks = JobWiring.historySinks(options());
        assertEquals(PROFILES, uri(sinks.baselines().orElseThrow().profiles()));
        assertEquals(JOB, uri(sinks.evidence()));
    }
}
