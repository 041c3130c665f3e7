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
        String message = refusal(with("sink.batchsize", "10"), "job.properties");
        assertTrue(message.contains("unknown option 'sink.batchsize'"), message);
        assertTrue(message.contains("job.properties"));
    }

    @Test
    void badValueIsNamed() {
        String message = refusal(with("checkpoint.interval", "often"), "test");
        assertTrue(
                message.contains("option 'checkpoint.interval' has a bad value 'often'"), message);
        message = refusal(with("sink.batch-size", "0"), "test");
        assertTrue(message.contains("'sink.batch-size' must be positive"), message);
    }

    @Test
    void requiredOptionsAreNamed() {
        String message = refusal(Map.of(), "test");
        assertTrue(message.contains("'kafka.bootstrap-servers' is required"), message);
        assertTrue(message.contains("'store.uri' is required"), message);
    }

    /** The message of the job's refusal to load {@code options} from {@code source}. */
    private static String refusal(Map<String, String> options, String source) {
        return assertThrows(IllegalArgumentException.class, () -> JobOptions.load(options, source))
                .getMessage();
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
