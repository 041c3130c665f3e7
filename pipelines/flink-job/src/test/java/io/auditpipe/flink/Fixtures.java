package io.auditpipe.flink;

import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.flink.records.CountRow;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.records.ParsedRecord;
import io.auditpipe.parser.AuditEvent;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.test.junit5.MiniClusterExtension;

/** Named instants and factory methods for the job tests (no inline JSON in the tests). */
final class Fixtures {
    static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");
    static final KafkaOrigin ORIGIN = new KafkaOrigin("audit.raw", 3, 42, T0.toEpochMilli() + 5);

    private Fixtures() {}

    /** {@code e} as read from audit.raw's partition 0 at {@code offset}, at {@code at}. */
    static IngestedEvent read(AuditEvent e, long offset, long at) {
        return new IngestedEvent(e, new KafkaOrigin("audit.raw", 0, offset, at), "d");
    }

    /** The counts of the rows a count window emitted so far, in order; the output is cleared. */
    static List<Long> counts(OneInputStreamOperatorTestHarness<?, ? extends CountRow> harness) {
        List<Long> out = harness.extractOutputValues().stream().map(r -> r.count).toList();
        harness.getOutput().clear();
        return out;
    }

    /** The job's options with every default, its Kafka and store named but never reached. */
    static Configuration options() {
        return JobOptions.load(
                        Map.of(
                                "kafka.bootstrap-servers",
                                "unused:9092",
                                "store.uri",
                                "mongodb://unused/"),
                        "test")
                .job;
    }

    /** A bounded source of {@code records}, in order. */
    static DataGeneratorSource<ParsedRecord> source(List<ParsedRecord> records) {
        return new DataGeneratorSource<>(
                i -> records.get(i.intValue()),
                records.size(),
                TypeInformation.of(ParsedRecord.class));
    }

    /** The MiniCluster the job's tests run on: one TaskManager of two slots. */
    static MiniClusterExtension miniCluster() {
        return new MiniClusterExtension(
                new MiniClusterResourceConfiguration.Builder()
                        .setNumberTaskManagers(1)
                        .setNumberSlotsPerTaskManager(2)
                        .build());
    }

    /**
     * A local environment of two slots, checkpointing every 500 ms (the archive commits its files
     * on checkpoints), that fails rather than retries for ever.
     */
    static StreamExecutionEnvironment environment() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(500);
        env.configure(Configuration.fromMap(Map.of("restart-strategy.type", "none")));
        return env;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] key(String server) {
        return utf8(
                "{\"v\":1,\"server\":\""
                        + server
                        + "\",\"format\":\"percona-json\",\"source\":\"/var/lib/mysql/audit.log\",\"collector\":\"test\"}");
    }

    /**
     * A Percona JSON record: its name, record id (by {@code seq}), timestamp ({@code
     * secondsAfterT0} after T0) and the rest of its fields ({@code fields}: JSON members, each with
     * its comma before).
     */
    private static byte[] record(String name, long seq, long secondsAfterT0, String fields) {
        String ts = T0.plusSeconds(secondsAfterT0).toString().replace("Z", " UTC");
        return utf8(
                String.format(
                        "{\"audit_record\":{\"name\":\"%s\",\"record\":\"%d_2026-11-22T09:00:00\",\"timestamp\":\"%s\"%s}}",
                        name, seq, ts, fields));
    }

    private static final String CONNECT =
            ",\"connection_id\":\"%d\",\"status\":%d,\"user\":\"%s\",\"priv_user\":\"%s\",\"os_login\":\"\",\"proxy_user\":\"\",\"host\":\"app-1\",\"ip\":\"10.0.0.5\",\"db\":\"shop\"";
    private static final String QUERY =
            ",\"command_class\":\"%s\",\"connection_id\":\"12\",\"status\":%d,\"sqltext\":\"SELECT 1\",\"user\":\"app[app] @ app-1 [10.0.0.5]\",\"host\":\"app-1\",\"os_user\":\"\",\"ip\":\"10.0.0.5\",\"db\":\"shop\"";

    static byte[] connect(long seq, String user, int status, long secondsAfterT0) {
        String fields = String.format(CONNECT, seq, status, user, user);
        return record("Connect", seq, secondsAfterT0, fields);
    }

    static byte[] query(long seq, String commandClass, int status, long secondsAfterT0) {
        return record("Query", seq, secondsAfterT0, String.format(QUERY, commandClass, status));
    }
}
