package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.flink.options.JobOptions;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JobOptionsTest {
    private static final Map<String, String> REQUIRED =
            Map.of(
                    "kafka.bootstrap-servers",
                    "127.0.0.1:9092",
                    "store.uri",
                    "mongodb://127.0.0.1:27017/");

    private static Map<String, String> with(String k, String v) {
        java.util.Map<String, String> m = new java.util.TreeMap<>(REQUIRED);
        m.put(k, v);
        return m;
    }

    @Test
    void defaultsAndTypedValues() {
        JobOptions.Loaded l = JobOptions.load(with("sink.flush-interval", "250ms"), "test");
        assertEquals(Duration.ofMillis(250), l.job.get(JobOptions.SINK_FLUSH_INTERVAL));
        assertEquals("audit.raw", l.job.get(JobOptions.KAFKA_RAW_TOPIC));
        assertEquals("audit_events", l.job.get(JobOptions.EVENTS_COLLECTION));
    }

    @Test
    void flinkPrefixedEntriesGoToFlinkWithoutThePrefix() {
        JobOptions.Loaded l = JobOptions.load(with("flink.rest.port", "18081"), "test");
        assertEquals("18081", l.flink.toMap().get("rest.port"));
        assertTrue(l.job.toMap().keySet().stream().noneMatch(k -> k.startsWith("flink.")));
    }

    @Test
    void unknownKeyIsNamed() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> JobOptions.load(with("sink.batchsize", "10"), "job.properties"));
        assertTrue(e.getMessage().contains("unknown option 'sink.batchsize'"), e.getMessage());
        assertTrue(e.getMessage().contains("job.properties"));
    }

    @Test
    void badValueIsNamed() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> JobOptions.load(with("checkpoint.interval", "often"), "test"));
        assertTrue(
                e.getMessage().contains("option 'checkpoint.interval' has a bad value 'often'"),
                e.getMessage());
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> JobOptions.load(with("sink.batch-size", "0"), "test"));
        assertTrue(e.getMessage().contains("'sink.batch-size' must be positive"), e.getMessage());
    }

    @Test
    void requiredOptionsAreNamed() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class, () -> JobOptions.load(Map.of(), "test"));
        assertTrue(
                e.getMessage().contains("'kafka.bootstrap-servers' is required"), e.getMessage());
        assertTrue(e.getMessage().contains("'store.uri' is required"), e.getMessage());
    }

    @Test
    void referenceListsEveryOption() {
        String md = JobOptions.markdownReference();
        JobOptions.all().forEach(o -> assertTrue(md.contains("`" + o.key() + "`"), o.key()));
    }

    @Test
    void committedReferenceIsUpToDate() throws Exception {
        java.nio.file.Path doc = java.nio.file.Path.of("../../docs/job-options.md");
        String text = java.nio.file.Files.readString(doc);
        assertTrue(
                text.endsWith(JobOptions.markdownReference()),
                "docs/job-options.md is stale: regenerate it with AuditPipelineJob --print-options");
    }
}
