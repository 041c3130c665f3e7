package io.auditpipe.flink;

import io.auditpipe.flink.functions.AuditRecordDeserializer;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.records.ParsedRecord;
import io.auditpipe.flink.sink.StoreDocuments;

import org.junit.jupiter.api.Test;

import static io.auditpipe.flink.Fixtures.ORIGIN;
import static io.auditpipe.flink.Fixtures.key;
import static io.auditpipe.flink.Fixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AuditRecordDeserializerTest {
    @Test
    void goodLineBecomesAnEventWithItsOrigin() {
        ParsedRecord r = AuditRecordDeserializer.parse(key("db-01"), Fixtures.connect(7, "app", 0, 0), ORIGIN);
        assertNull(r.deadLetter);
        assertEquals("db-01/7_2026-11-22T09:00:00", r.event.event.id);
        assertEquals(ORIGIN, r.event.origin);
        assertEquals(r.event.event.eventTimeMillis, r.eventTimeMillis());
    }

    @Test
    void badKeyIsADeadLetterWithTheOriginalBytes() {
        byte[] value = utf8("{\"audit_record\":{}}");
        ParsedRecord r = AuditRecordDeserializer.parse(utf8("db-01"), value, ORIGIN);
        DeadLetter d = r.deadLetter;
        assertEquals(DeadLetter.STAGE_PARSE, d.stage);
        assertEquals("parse:audit.raw/3/42", d.id);
        assertArrayEquals(value, d.originalValue);
        assertArrayEquals(utf8("db-01"), d.originalKey);
        assertEquals(ORIGIN.timestampMillis, r.eventTimeMillis(), "dead letters use the broker time");
    }

    @Test
    void badLineIsADeadLetterNamingTheServer() {
        byte[] value = new byte[] {'x', (byte) 0xff};
        DeadLetter d = AuditRecordDeserializer.parse(key("db-01"), value, ORIGIN).deadLetter;
        assertEquals("invalid UTF-8 at byte 1", d.reason);
        assertEquals("db-01", d.server);
        assertEquals("percona-json", d.format);
        assertArrayEquals(value, d.originalValue);
    }

    @Test
    void nullValueIsADeadLetterNotACrash() {
        DeadLetter d = AuditRecordDeserializer.parse(key("db-01"), null, new KafkaOrigin("t", 0, 1, 5)).deadLetter;
        assertEquals("empty line", d.reason);
    }

    @Test
    void eventTimeFarAheadOfShippingIsKeptButNotTrusted() {
        long shipped = Fixtures.T0.toEpochMilli();
        KafkaOrigin origin = new KafkaOrigin("audit.raw", 0, 7, shipped);
        ParsedRecord near = AuditRecordDeserializer.parse(key("db-01"), Fixtures.connect(1, "a", 0, 299), origin);
        assertTrue(near.event.eventTimeTrusted, "4:59 ahead: clock skew, trusted");
        assertTrue(near.drivesWatermark());
        ParsedRecord far = AuditRecordDeserializer.parse(key("db-01"), Fixtures.connect(2, "a", 0, 86_400), origin);
        assertFalse(far.event.eventTimeTrusted, "a day ahead");
        assertFalse(far.drivesWatermark());
        assertEquals(shipped, far.eventTimeMillis(), "counted when it was shipped");
        assertEquals(shipped + 86_400_000L, far.event.event.eventTimeMillis, "kept as written");
        assertEquals(false, StoreDocuments.event(far.event).get("event_time_trusted"));
        assertFalse(StoreDocuments.event(near.event).containsKey("event_time_trusted"));
        assertFalse(AuditRecordDeserializer.parse(key("db-01"), utf8("x"), origin).drivesWatermark(),
                "dead letters never move the watermark");
    }
}
