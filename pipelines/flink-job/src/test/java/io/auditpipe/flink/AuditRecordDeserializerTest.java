package io.auditpipe.flink;

import static io.auditpipe.flink.Fixtures.ORIGIN;
import static io.auditpipe.flink.Fixtures.key;
import static io.auditpipe.flink.Fixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.functions.AuditRecordDeserializer;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.records.ParsedRecord;
import io.auditpipe.flink.sink.StoreDocuments;
import org.junit.jupiter.api.Test;

class AuditRecordDeserializerTest {
    @Test
    void goodLineBecomesAnEventWithItsOrigin() {
        ParsedRecord r =
                AuditRecordDeserializer.parse(
                        key("db-01"), Fixtures.connect(7, "app", 0, 0), ORIGIN);
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
        assertEquals(
                ORIGIN.timestampMillis, r.eventTimeMillis(), "dead letters use the broker time");
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
        DeadLetter d =
                AuditRecordDeserializer.parse(key("db-01"), null, new KafkaOrigin("t", 0, 1, 5))
                        .deadLetter;
        assertEquals("empty line", d.reason);
    }

    @Test
    void eventTimeFarAheadOfShippingIsKeptButNotTrusted() {
        long shipped = Fixtures.T0.toEpochMilli();
        KafkaOrigin origin = new KafkaOrigin("audit.raw", 0, 7, shipped);
        ParsedRecord near =
                AuditRecordDeserializer.parse(
                        key("db-01"), Fixtures.connect(1, "a", 0, 299), origin);
        assertTrue(near.event.eventTimeTrusted, "4:59 ahead: clock skew, trusted");
        assertTrue(near.drivesWatermark());
        ParsedRecord far =
                AuditRecordDeserializer.parse(
                        key("db-01"), Fixtures.connect(2, "a", 0, 86_400), origin);
        assertFalse(far.event.eventTimeTrusted, "a day ahead");
        assertFalse(far.drivesWatermark());
        assertEquals(shipped, far.eventTimeMillis(), "counted when it was shipped");
        assertEquals(shipped + 86_400_000L, far.event.event.eventTimeMillis, "kept as written");
        assertEquals(false, EventDocument.of(far.event).get("event_time_trusted"));
        assertFalse(EventDocument.of(near.event).containsKey("event_time_trusted"));
        assertFalse(
                AuditRecordDeserializer.parse(key("db-01"), utf8("x"), origin).drivesWatermark(),
                "dead letters never move the watermark");
    }

    private static byte[] cutKey(String cut) {
        return utf8(
                "{\"v\":1,\"server\":\"db-01\",\"format\":\"percona-json\",\"source\":\"/logs/audit.log\","
                        + "\"collector\":\"rsyslog\",\"cut\":"
                        + cut
                        + "}");
    }

    @Test
    void aLineTheCollectorCutAtANulByteIsADeadLetterSayingWhatWasCutAndWhere() {
        // the line is a valid record up to its NUL: parsed, it would be stored as if the server
        // wrote only that
        byte[] prefix = Fixtures.connect(9, "app", 0, 0);
        byte[] key =
                cutKey(
                        "{\"problem\":\"nul-byte\",\"line_bytes\":"
                                + (prefix.length + 7)
                                + ",\"file\":\"/logs/audit.log.02\",\"offset\":81920}");
        ParsedRecord r = AuditRecordDeserializer.parse(key, prefix, ORIGIN);
        assertNull(r.event, "not stored as an event");
        DeadLetter d = r.deadLetter;
        assertEquals(DeadLetter.STAGE_COLLECT, d.stage);
        assertEquals("collect:audit.raw/3/42", d.id);
        assertEquals(
                "the collector could not ship this line whole: it holds a NUL byte, where the collector ends a "
                        + "message; kept: the "
                        + prefix.length
                        + " bytes before it, of "
                        + (prefix.length + 7)
                        + "; the whole line is in /logs/audit.log.02 at byte offset 81920",
                d.reason);
        assertArrayEquals(prefix, d.originalValue);
        assertEquals("db-01", d.server);
    }

    @Test
    void aLineLongerThanTheLimitIsADeadLetterNamingTheLimit() {
        byte[] key =
                cutKey(
                        "{\"problem\":\"too-long\",\"line_bytes\":1025,\"file\":\"/logs/audit.log\",\"offset\":0}");
        DeadLetter d = AuditRecordDeserializer.parse(key, new byte[1025], ORIGIN).deadLetter;
        assertEquals(DeadLetter.STAGE_COLLECT, d.stage);
        assertTrue(
                d.reason.contains(
                        "longer than max_line_size (1024 bytes); kept: its first 1025 bytes"),
                d.reason);
    }

    @Test
    void aMalformedCutReportIsABadKey() {
        DeadLetter d =
                AuditRecordDeserializer.parse(cutKey("\"yes\""), utf8("x"), ORIGIN).deadLetter;
        assertEquals(DeadLetter.STAGE_PARSE, d.stage);
        assertEquals("message key field 'cut' is not an object", d.reason);
        d =
                AuditRecordDeserializer.parse(cutKey("{\"line_bytes\":3}"), utf8("x"), ORIGIN)
                        .deadLetter;
        assertEquals("message key field 'cut' has no 'problem'", d.reason);
    }

    static final String PAN = "4111 1111 1111 1111";

    /** A record whose statement holds a card number. */
    static final byte[] CARD_INSERT =
            utf8(
                    "{\"audit_record\":{\"name\":\"Query\",\"record\":\"9_2026-11-22T10:00:00\",\"timestamp\":"
                            + "\"2026-11-22T10:00:00Z\",\"command_class\":\"insert\",\"connection_id\":\"1\",\"status\":0,"
                            + "\"sqltext\":\"INSERT INTO cards VALUES ('"
                            + PAN
                            + "')\",\"user\":\"app[app] @ localhost []\","
                            + "\"host\":\"localhost\",\"os_user\":\"\",\"ip\":\"\",\"db\":\"shop\"}}");

    @Test
    void cardNumbersNeverLeaveTheSourceUnmasked() {
        byte[] line = CARD_INSERT;
        ParsedRecord r = AuditRecordDeserializer.parse(key("db-01"), line, ORIGIN);
        String doc = EventDocument.of(r.event).toJson();
        assertFalse(doc.contains(PAN), doc);
        assertTrue(doc.contains("**** **** **** 1111"), doc);
        assertEquals(java.util.List.of("pan"), r.event.event.masked);
        assertEquals(java.util.List.of("shop.cards"), r.event.event.tables);
        // the digest is of the masked record: one of the unmasked could be reversed by trying the
        // hidden digits
        assertEquals(
                io.auditpipe.parser.Digests.sha256Hex(
                        utf8(
                                new String(line, java.nio.charset.StandardCharsets.UTF_8)
                                        .replace(PAN, "**** **** **** 1111"))),
                r.event.lineSha256);

        byte[] broken = utf8("{\"audit_record\":{\"name\":\"Query\",\"sqltext\":\"" + PAN + "\"");
        DeadLetter d = AuditRecordDeserializer.parse(key("db-01"), broken, ORIGIN).deadLetter;
        String dl = StoreDocuments.deadLetter(d, 1 << 20).toJson();
        assertFalse(dl.contains(PAN), dl);
        assertFalse(dl.contains(java.util.Base64.getEncoder().encodeToString(broken)), dl);
        assertEquals(
                broken.length,
                d.originalValue
                        .length); // every other byte kept: a reviewer can still find the line
        assertEquals(java.util.List.of("pan"), d.masked);
        assertTrue(dl.contains("\"masked\": [\"pan\"]"), dl);
    }

    @Test
    void theAlertRulesGetTheSameMaskedEventWithoutTheStoredOriginal() {
        byte[] line = CARD_INSERT;
        ParsedRecord full = AuditRecordDeserializer.parse(key("db-01"), line, ORIGIN);
        java.util.List<ParsedRecord> out = new java.util.ArrayList<>();
        AuditRecordDeserializer.forAlerts(
                        AuditRecordDeserializer.DEFAULT_MAX_AHEAD,
                        io.auditpipe.enrich.ComplianceSettings.defaults())
                .deserialize(
                        new org.apache.kafka.clients.consumer.ConsumerRecord<>(
                                ORIGIN.topic,
                                ORIGIN.partition,
                                ORIGIN.offset,
                                ORIGIN.timestampMillis,
                                org.apache.kafka.common.record.TimestampType.CREATE_TIME,
                                0,
                                line.length,
                                key("db-01"),
                                line,
                                new org.apache.kafka.common.header.internals.RecordHeaders(),
                                java.util.Optional.empty()),
                        new org.apache.flink.util.Collector<>() {
                            public void collect(ParsedRecord r) {
                                out.add(r);
                            }

                            public void close() {}
                        });
        ParsedRecord light = out.get(0);
        org.bson.Document fullDoc = EventDocument.of(full.event);
        org.bson.Document lightDoc = EventDocument.of(light.event);
        assertTrue(
                fullDoc.containsKey("original") && fullDoc.containsKey("line_sha256"),
                fullDoc.toJson());
        for (String storedOnly : java.util.List.of("original", "line_sha256")) {
            fullDoc.remove(storedOnly);
            lightDoc.remove(storedOnly);
        }
        assertEquals(fullDoc.toJson(), lightDoc.toJson(), "the same event, masked alike");
        assertTrue(
                light.event.event.sqltext.contains("**** **** **** 1111"),
                light.event.event.sqltext);
        assertEquals(full.event.eventTimeTrusted, light.event.eventTimeTrusted);
        assertNull(light.event.original);
        assertNull(light.event.lineSha256);
    }
}
