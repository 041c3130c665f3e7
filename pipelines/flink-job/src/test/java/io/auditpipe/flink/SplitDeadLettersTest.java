package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.auditpipe.flink.functions.AuditRecordDeserializer;
import io.auditpipe.flink.functions.SplitDeadLetters;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.records.ParsedRecord;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.Test;

/**
 * Events go on, dead letters to their side output, in the order they came; the function keeps no
 * state.
 */
class SplitDeadLettersTest {
    @Test
    void eventsGoOnAndDeadLettersGoAside() throws Exception {
        ParsedRecord good =
                AuditRecordDeserializer.parse(
                        Fixtures.key("db-01"), Fixtures.connect(1, "app", 0, 0), origin(0));
        ParsedRecord bad =
                AuditRecordDeserializer.parse(
                        Fixtures.key("db-01"), Fixtures.utf8("{\"audit_record\":"), origin(1));
        ParsedRecord ahead =
                AuditRecordDeserializer.parse(
                        Fixtures.key("db-01"),
                        Fixtures.query(2, "select", 0, 365L * 86_400),
                        origin(2)); // a year ahead: stored, untrusted time
        try (OneInputStreamOperatorTestHarness<ParsedRecord, IngestedEvent> h =
                ProcessFunctionTestHarnesses.forProcessFunction(new SplitDeadLetters())) {
            for (ParsedRecord r : List.of(good, bad, ahead))
                h.processElement(new StreamRecord<>(r, r.eventTimeMillis()));
            assertEquals(
                    List.of(good.event.event.id, ahead.event.event.id),
                    h.extractOutputValues().stream()
                            .map(e -> e.event.id)
                            .collect(Collectors.toList()));
            List<DeadLetter> dead =
                    h.getSideOutput(SplitDeadLetters.DEAD_LETTERS).stream()
                            .map(StreamRecord::getValue)
                            .collect(Collectors.toList());
            assertEquals(
                    List.of("parse:audit.raw/0/1"),
                    dead.stream().map(d -> d.id).collect(Collectors.toList()));
            assertEquals(false, h.extractOutputValues().get(1).eventTimeTrusted);
        }
    }

    private static KafkaOrigin origin(long offset) {
        return new KafkaOrigin("audit.raw", 0, offset, Fixtures.T0.toEpochMilli());
    }
}
