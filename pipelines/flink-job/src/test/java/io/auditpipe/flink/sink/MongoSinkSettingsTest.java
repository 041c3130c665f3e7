package io.auditpipe.flink.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.auditpipe.flink.options.JobOptions;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

/**
 * Who writes the sessions and baselines: store.profiles-uri's user where it is given
 * (docs/deployment.md).
 */
class MongoSinkSettingsTest {
    static final String JOB = "mongodb://job:pw@store:27017/?authSource=admin";
    static final String PROFILES = "mongodb://profiles:pw@store:27017/?authSource=admin";

    @Test
    void sessionsAndBaselinesAreWrittenAsTheProfilesUserAndEverythingElseAsTheJobs() {
        Configuration options = new Configuration();
        options.set(JobOptions.STORE_URI, JOB);
        options.set(JobOptions.STORE_PROFILES_URI, PROFILES);
        assertEquals(PROFILES, MongoSinkSettings.forProfiles(options, "audit_sessions").uri);
        assertEquals(PROFILES, MongoSinkSettings.profilesUri(options));
        assertEquals(JOB, MongoSinkSettings.forCollection(options, "audit_events").uri);
        assertEquals(
                "audit_sessions",
                MongoSinkSettings.forProfiles(options, "audit_sessions").collection());
    }

    @Test
    void withoutAProfilesUserTheJobsWritesThem() {
        Configuration options = new Configuration();
        options.set(JobOptions.STORE_URI, JOB);
        assertEquals(JOB, MongoSinkSettings.forProfiles(options, "audit_baselines").uri);
        assertEquals(JOB, MongoSinkSettings.profilesUri(options));
    }
}
