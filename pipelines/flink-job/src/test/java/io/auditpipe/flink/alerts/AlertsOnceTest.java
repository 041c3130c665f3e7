package io.auditpipe.flink.alerts;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
 * {@link AlertsOnce} in Flink's operator test harness: ids once, forgotten after an hour of event
 * time, kept over a restore.
 */
class AlertsOnceTest {
    static final long T0 = AlertRulesTest.T0;
    static final long HOUR = AlertsOnce.REMEMBERED.toMillis();

    static KeyedOneInputStreamOperatorTestHarness<String, Alert, Alert> harness() throws Exception {
        var h =
                new KeyedOneInputStreamOperatorTestHarness<String, Alert, Alert>(
                        new KeyedProcessOperator<>(new AlertsOnce()), a -> a.id, Types.STRING);
        h.open();
        return h;
    }

    static Alert alert(String id, long lastEvent) {
        return Alert.of(
                        "account_change",
                        Alert.HIGH,
                        id,
                        "db-01",
                        "dba@bastion",
                        "changed accounts")
                .withEvidence(List.of("db-01/1"), lastEvent, lastEvent);
    }

    static List<String> out(KeyedOneInputStreamOperatorTestHarness<String, Alert, Alert> h) {
        return h.extractOutputValues().stream().map(a -> a.id).collect(Collectors.toList());
    }

    @Test
    void anIdPassesOnceWhileRememberedAndAgainAfterAnHourOfEventTime() throws Exception {
        try (var h = harness()) {
            h.processElement(new StreamRecord<>(alert("a", T0), T0));
            h.processElement(new StreamRecord<>(alert("b", T0), T0));
            h.processElement(
                    new StreamRecord<>(alert("a", T0), T0)); // a re-sent copy raised it again
            h.processWatermark(new Watermark(T0 + HOUR - 1));
            h.processElement(new StreamRecord<>(alert("a", T0), T0));
            assertEquals(List.of("a", "b"), out(h));
            assertEquals(2, h.numKeyedStateEntries());
            h.processWatermark(new Watermark(T0 + HOUR));
            assertEquals(0, h.numKeyedStateEntries(), "forgotten");
            assertEquals(0, h.numEventTimeTimers(), "with its timer");
            h.processElement(new StreamRecord<>(alert("a", T0), T0));
            assertEquals(List.of("a", "b", "a"), out(h));
        }
    }

    @Test
    void anAlertOnLateEventsIsRememberedFromTheWatermark() throws Exception {
        try (var h = harness()) {
            h.processWatermark(new Watermark(T0 + 5 * HOUR));
            h.processElement(new StreamRecord<>(alert("late", T0), T0));
            h.processWatermark(new Watermark(T0 + 5 * HOUR + 1));
            h.processElement(new StreamRecord<>(alert("late", T0), T0));
            assertEquals(
                    List.of("late"),
                    out(h),
                    "an hour from the watermark, not from its long past events");
        }
    }

    @Test
    void theRememberedIdsSurviveARestore() throws Exception {
        OperatorSubtaskState snapshot;
        try (var h = harness()) {
            h.processElement(new StreamRecord<>(alert("a", T0), T0));
            snapshot = h.snapshot(1, T0);
        }
        try (var h =
                new KeyedOneInputStreamOperatorTestHarness<String, Alert, Alert>(
                        new KeyedProcessOperator<>(new AlertsOnce()), a -> a.id, Types.STRING)) {
            h.initializeState(snapshot);
            h.open();
            h.processElement(new StreamRecord<>(alert("a", T0), T0));
            h.processElement(new StreamRecord<>(alert("c", T0), T0));
            assertEquals(List.of("c"), out(h));
        }
    }
}
