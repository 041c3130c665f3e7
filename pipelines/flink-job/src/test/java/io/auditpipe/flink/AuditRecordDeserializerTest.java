package io.auditpipe.flink;

import io.auditpipe.flink.functions.AuditRecordDeserializer;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.records.ParsedRecord;

import org.junit.jupiter.api.Test;

import static io.auditpipe.flink.Fixtures.ORIGIN;
import static io.auditpipe.flink.Fixtures.key;
import static io.auditpipe.flink.Fixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

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
}
