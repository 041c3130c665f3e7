package io.auditpipe.flink;

import io.auditpipe.flink.records.CountRow;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.parser.AuditEvent;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;

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

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] key(String server) {
        return utf8(
                "{\"v\":1,\"server\":\""
                        + server
                        + "\",\"format\":\"percona-json\",\"source\":\"/var/lib/mysql/audit.log\",\"collector\":\"test\"}");
    }

    private static String ts(long secondsAfterT0) {
        return T0.plusSeconds(secondsAfterT0).toString().replace("Z", " UTC");
    }

    static byte[] connect(long seq, String user, int status, long secondsAfterT0) {
        return utf8(
                "{\"audit_record\":{\"name\":\"Connect\",\"record\":\""
                        + seq
                        + "_2026-11-22T09:00:00\",\"timestamp\":\""
                        + ts(secondsAfterT0)
                        + "\",\"connection_id\":\""
                        + seq
                        + "\",\"status\":"
                        + status
                        + ",\"user\":\""
                        + user
                        + "\",\"priv_user\":\""
                        + user
                        + "\",\"os_login\":\"\",\"proxy_user\":\"\",\"host\":\"app-1\",\"ip\":\"10.0.0.5\",\"db\":\"shop\"}}");
    }

    static byte[] query(long seq, String commandClass, int status, long secondsAfterT0) {
        return utf8(
                "{\"audit_record\":{\"name\":\"Query\",\"record\":\""
                        + seq
                        + "_2026-11-22T09:00:00\",\"timestamp\":\""
                        + ts(secondsAfterT0)
                        + "\",\"command_class\":\""
                        + commandClass
                        + "\",\"connection_id\":\"12\",\"status\":"
                        + status
                        + ",\"sqltext\":\"SELECT 1\",\"user\":\"app[app] @ app-1 [10.0.0.5]\",\"host\":\"app-1\",\"os_user\":\"\",\"ip\":\"10.0.0.5\",\"db\":\"shop\"}}");
    }
}
