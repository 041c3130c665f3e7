package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.auditpipe.flink.functions.HourlyCounts;
import io.auditpipe.flink.records.HourRow;
import io.auditpipe.flink.records.StatsKey;
import io.auditpipe.flink.records.StatsRow;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * {@link HourlyCounts} in Flink's operator test harness: the hour is the sum of its minutes' latest
 * counts, written at each change live and once at the hour's end for imported history, and
 * forgotten (state and timer) once none of its minutes can change.
 */
class HourlyCountsTest {
    static final long H = Fixtures.T0.toEpochMilli(); // 10:00, an hour's start
    static final long MINUTE = 60_000L;
    static final long LATENESS = Duration.ofMinutes(15).toMillis();

    static KeyedOneInputStreamOperatorTestHarness<String, StatsRow, HourRow> harness(HourlyCounts f)
            throws Exception {
        var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new KeyedProcessOperator<>(f), HourlyCounts.KEY, Types.STRING);
        h.open();
        return h;
    }

    /**
     * A minute's row as the stats window emits it: timestamped at the minute's last millisecond.
     */
    static StreamRecord<StatsRow> minute(String server, String user, long start, long count) {
        StatsKey k = new StatsKey();
        k.server = server;
        k.user = user;
        k.eventName = "Query";
        k.commandClass = "select";
        k.status = 0;
        return new StreamRecord<>(new StatsRow(k, start, count, null), start + MINUTE - 1);
    }

    static List<String> out(KeyedOneInputStreamOperatorTestHarness<String, StatsRow, HourRow> h) {
        return h.extractOutputValues().stream()
                .map(r -> r.id() + "=" + r.count())
                .collect(Collectors.toList());
    }

    @Test
    void liveEachChangeWritesTheSumOfTheMinutesLatestCounts() throws Exception {
        try (var h = harness(HourlyCounts.live(Duration.ofMillis(LATENESS)))) {
            h.processElement(minute("db-01", "app", H, 3));
            h.processElement(minute("db-01", "dba", H, 1));
            h.processElement(
                    minute("db-01", "app", H, 5)); // the same minute fired again, with a late event
            h.processElement(minute("db-01", "app", H + 59 * MINUTE, 2));
            h.processElement(minute("db-02", "app", H + MINUTE, 4));
            h.processElement(minute("db-01", "app", H + 60 * MINUTE, 7)); // the next hour
            assertEquals(
                    List.of(
                            H + "|db-01=3",
                            H + "|db-01=4",
                            H + "|db-01=6",
                            H + "|db-01=8",
                            H + "|db-02=4",
                            (H + 3_600_000) + "|db-01=7"),
                    out(h));
            assertEquals(3, h.numEventTimeTimers());
            h.processWatermark(new Watermark(H + 3_600_000 - 1 + LATENESS - 1));
            assertEquals(3, h.numEventTimeTimers(), "a minute of the hour may still change");
            h.processWatermark(new Watermark(H + 3_600_000 - 1 + LATENESS));
            assertEquals(
                    1,
                    h.numEventTimeTimers(),
                    "the hour forgotten with its timer, the next one kept");
            assertEquals(2, h.numKeyedStateEntries(), "the next hour's minute and total");
            h.processWatermark(new Watermark(H + 2 * 3_600_000 - 1 + LATENESS));
            assertEquals(0, h.numKeyedStateEntries());
            assertEquals(0, h.numEventTimeTimers());
            assertEquals(6, out(h).size(), "nothing written when an hour is forgotten");
        }
    }

    @Test
    void importedHistoryWritesEachHourOnceAtItsEnd() throws Exception {
        try (var h = harness(HourlyCounts.once("import-t"))) {
            h.processElement(minute("db-01", "app", H, 3));
            h.processElement(minute("db-01", "dba", H + 30 * MINUTE, 1));
            h.processElement(minute("db-01", "app", H + 59 * MINUTE, 2));
            h.processWatermark(new Watermark(H + 3_600_000 - 2));
            assertEquals(List.of(), out(h));
            h.processWatermark(new Watermark(H + 3_600_000 - 1));
            assertEquals(List.of(H + "|db-01|import-t=6"), out(h));
            assertEquals(0, h.numKeyedStateEntries());
            assertEquals(0, h.numEventTimeTimers());
        }
    }

    @Test
    void theMinutesSurviveARestore() throws Exception {
        OperatorSubtaskState snapshot;
        try (var h = harness(HourlyCounts.live(Duration.ofMillis(LATENESS)))) {
            h.processElement(minute("db-01", "app", H, 3));
            snapshot = h.snapshot(1, H);
        }
        try (var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new KeyedProcessOperator<>(HourlyCounts.live(Duration.ofMillis(LATENESS))),
                        HourlyCounts.KEY,
                        Types.STRING)) {
            h.initializeState(snapshot);
            h.open();
            h.processElement(minute("db-01", "app", H, 4));
            h.processElement(minute("db-01", "dba", H, 2));
            assertEquals(List.of(H + "|db-01=4", H + "|db-01=6"), out(h));
            h.processWatermark(new Watermark(H + 3_600_000 - 1 + LATENESS));
            assertEquals(0, h.numEventTimeTimers(), "the restored timer fired");
            assertEquals(0, h.numKeyedStateEntries());
        }
    }
}
