package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.flink.functions.PreCountStats;
import io.auditpipe.flink.records.StatsEvent;
import io.auditpipe.parser.AuditEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link PreCountStats}: sums per stats key and minute, sent before every watermark and checkpoint
 * barrier and at its bound, too-late records alone, and nothing held in a snapshot.
 */
class PreCountStatsTest {
    private static final long T0 = Fixtures.T0.toEpochMilli();
    private static final Duration LATENESS = Duration.ofMinutes(2);

    private OneInputStreamOperatorTestHarness<StatsEvent, StatsEvent> harness;
    private int seq;

    @BeforeEach
    void setUp() throws Exception {
        harness =
                new OneInputStreamOperatorTestHarness<>(
                        new PreCountStats(AuditPipeline.STATS_WINDOW, LATENESS, 4));
        harness.open();
    }

    @AfterEach
    void tearDown() throws Exception {
        harness.close();
    }

    private void event(String user, long at) throws Exception {
        AuditEvent e = new AuditEvent();
        e.id = "db-01/" + (++seq);
        e.server = "db-01";
        e.user = user;
        e.eventName = "Query";
        e.commandClass = "select";
        e.eventTimeMillis = at;
        harness.processElement(new StreamRecord<>(StatsEvent.of(Fixtures.read(e, seq, at)), at));
    }

    /**
     * What came out: "user@minute x count" for records, "W<time>" for watermarks, "idle"/"active",
     * in order.
     */
    private List<String> out() {
        List<String> seen = new ArrayList<>();
        for (Object o : harness.getOutput()) {
            if (o instanceof Watermark w) {
                seen.add("W" + (w.getTimestamp() - T0));
            } else if (o instanceof WatermarkStatus s) {
                seen.add(s.isIdle() ? "idle" : "active");
            } else {
                @SuppressWarnings("unchecked")
                StreamRecord<StatsEvent> r = (StreamRecord<StatsEvent>) o;
                seen.add(
                        r.getValue().key.user
                                + "@"
                                + (r.getTimestamp() - T0) / 60_000
                                + "x"
                                + r.getValue().count);
            }
        }
        harness.getOutput().clear();
        return seen;
    }

    @Test
    void sumsEachKeyAndMinuteAndSendsThemBeforeTheWatermark() throws Exception {
        for (int i = 0; i < 5; i++) event("app", T0 + i * 1_000);
        event("app", T0 + 61_000);
        event("ops", T0 + 2_000);
        assertEquals(List.of(), out(), "held until a watermark, a barrier or the bound");
        harness.processWatermark(T0 + 10_000);
        List<String> first = out();
        assertEquals(4, first.size());
        assertTrue(first.containsAll(List.of("app@0x5", "app@1x1", "ops@0x1")), first.toString());
        assertEquals(
                "W10000", first.get(3), "every sum before the watermark that could make it late");
    }

    @Test
    void aRecordTooLateForItsMinuteGoesOnAloneSoItsDeadLetterNamesIt() throws Exception {
        harness.processWatermark(T0 + 60_000 - 1 + LATENESS.toMillis());
        out();
        event("app", T0 + 1_000);
        event("app", T0 + 2_000);
        event("app", T0 + 60_000); // the next minute is still open
        assertEquals(List.of("app@0x1", "app@0x1"), out(), "each alone, at once");
        harness.processWatermark(T0 + 60_000 + LATENESS.toMillis());
        assertEquals(List.of("app@1x1", "W" + (60_000 + LATENESS.toMillis())), out());
    }

    @Test
    void theWindowsAreNeverToldThatItsInputIsIdle() throws Exception {
        harness.processWatermark(T0 + 10_000);
        out();
        harness.processWatermarkStatus(WatermarkStatus.IDLE);
        event("app", T0 + 1_000);
        event("app", T0 + 2_000);
        harness.processWatermarkStatus(WatermarkStatus.ACTIVE);
        harness.processWatermark(T0 + 20_000);
        assertEquals(
                List.of("app@0x2", "W20000"),
                out(),
                "no status: the windows' watermark stays the lowest of every subtask's, this one's too,"
                        + " so a sum on time here is on time there");
    }

    @Test
    void nothingIsHeldAcrossACheckpointOrPastTheBound() throws Exception {
        event("app", T0);
        event("app", T0 + 1);
        harness.prepareSnapshotPreBarrier(1L);
        assertEquals(
                List.of("app@0x2"),
                out(),
                "sent before the barrier: counted in the checkpoint before it");
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        assertEquals(
                0,
                snapshot.getManagedKeyedState().size() + snapshot.getManagedOperatorState().size(),
                "no state of its own");
        event("a", T0);
        event("b", T0);
        event("c", T0);
        assertEquals(List.of(), out());
        event("d", T0); // the fourth sum: the bound of 4
        assertEquals(4, out().size());
    }
}
