package io.auditpipe.flink;

import io.auditpipe.flink.records.KafkaOrigin;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/** Named instants and factory methods for the job tests (no inline JSON in the tests). */
final class Fixtures {
    static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");
    static final KafkaOrigin ORIGIN = new KafkaOrigin("audit.raw", 3, 42, T0.toEpochMilli() + 5);

    private Fixtures() {}

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
