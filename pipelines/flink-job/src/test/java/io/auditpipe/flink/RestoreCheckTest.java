package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.flink.state.RestoreCheck;
import java.util.List;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;

/**
 * A job started from a snapshot lacking an operator whose state the snapshot holds: refused, naming
 * it, unless only sinks' state stays behind. The snapshot: the state the code before the first
 * release took (release-state/0.1.0), of a job with sessions.
 */
class RestoreCheckTest {
    private static final String STATE =
            ReleaseStateITCase.STATES
                    .resolve("0.1.0/savepoint")
                    .toAbsolutePath()
                    .toUri()
                    .toString();

    private static List<RestoreCheck.Unclaimed> unclaimed(boolean withSessions) throws Exception {
        StreamExecutionEnvironment env = Fixtures.environment();
        Collected c = new Collected("restore-check-" + withSessions);
        PipelineSinks.Builder sinks = c.live();
        if (withSessions) sinks.sessions(new CollectingSink<>("restore-check-sessions"));
        new AuditPipeline(
                        Fixtures.options(),
                        new PipelineSources(ReleaseInput.source(-1), ReleaseInput.source(-1)),
                        sinks.build())
                .build(env);
        return RestoreCheck.unclaimed(env.getStreamGraph(false), STATE);
    }

    @Test
    void theSameJobClaimsEveryState() throws Exception {
        List<RestoreCheck.Unclaimed> none = unclaimed(true);
        assertEquals(List.of(), none);
        assertNull(RestoreCheck.refusal(none, STATE));
    }

    @Test
    void aJobWithoutTheSessionsIsRefusedNamingThem() throws Exception {
        List<RestoreCheck.Unclaimed> lost = unclaimed(false);
        assertEquals(1, lost.size(), lost.toString());
        assertEquals("sessions", lost.get(0).uid());
        String refusal = RestoreCheck.refusal(lost, STATE);
        assertTrue(refusal.contains("'sessions' ("), refusal);
        assertTrue(refusal.contains("does not start"), refusal);
    }

    @Test
    void onlySinksStateMayStayBehind() {
        assertNull(
                RestoreCheck.refusal(
                        List.of(
                                new RestoreCheck.Unclaimed(
                                        "kafka-alerts", "kafka-alerts: Writer", true)),
                        STATE));
    }
}
