package io.auditpipe.flink.stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.flink.alerts.Alert;
import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.parser.AuditEvent;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.util.Collector;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The stream's messages: one per format and event, each alert in OCSF and ECS, long texts cut and
 * said so.
 */
class StreamMessagesTest {
    static final long T = 1_795_860_000_000L;

    static StreamMessages.Settings settings(StreamFormat... formats) {
        Map<StreamFormat, String> topics = new EnumMap<>(StreamFormat.class);
        topics.put(StreamFormat.AUDITPIPE, "audit.events");
        topics.put(StreamFormat.OCSF, "audit.ocsf");
        topics.put(StreamFormat.ECS, "audit.ecs");
        return new StreamMessages.Settings(List.of(formats), topics, "test");
    }

    static IngestedEvent event(String category, String action, String sqltext) {
        AuditEvent e = new AuditEvent();
        e.id = "db-01/7_2026-11-28T10:00:00";
        e.server = "db-01";
        e.format = "percona-json";
        e.recordId = "7_2026-11-28T10:00:00";
        e.eventTimeMillis = T;
        e.eventName = "Query";
        e.commandClass = action;
        e.connectionId = 4711L;
        e.status = 0;
        e.user = "app";
        e.host = "app-1";
        e.ip = "10.0.0.7";
        e.db = "shop";
        e.category = category;
        e.action = action;
        e.sqltext = sqltext;
        e.tables = List.of("shop.cards");
        IngestedEvent ie = new IngestedEvent();
        ie.event = e;
        ie.origin = new KafkaOrigin("audit.raw", 0, 9, T + 500);
        ie.lineSha256 = "0".repeat(64);
        ie.original = "{\"audit_record\":{}}";
        ie.chainSeq = 3;
        ie.chainDigest = "a".repeat(64);
        return ie;
    }

    static List<StreamMessage> run(StreamMessages.Settings s, IngestedEvent ie) {
        List<StreamMessage> out = new ArrayList<>();
        new StreamMessages.OfEvents(s).flatMap(ie, collector(out));
        return out;
    }

    static Collector<StreamMessage> collector(List<StreamMessage> out) {
        return new Collector<>() {
            @Override
            public void collect(StreamMessage m) {
                out.add(m);
            }

            @Override
            public void close() {}
        };
    }

    static Document json(StreamMessage m) {
        return Document.parse(new String(m.value, StandardCharsets.UTF_8));
    }

    @Test
    void eachEventOncePerFormatToItsTopicKeyedByItsId() {
        List<StreamMessage> out =
                run(
                        settings(StreamFormat.AUDITPIPE, StreamFormat.OCSF, StreamFormat.ECS),
                        event("data_read", "select", "SELECT * FROM cards"));
        assertEquals(
                List.of("audit.events", "audit.ocsf", "audit.ecs"),
                out.stream().map(m -> m.topic).toList());
        assertTrue(
                out.stream()
                        .allMatch(
                                m ->
                                        m.key.equals("db-01/7_2026-11-28T10:00:00")
                                                && m.timestampMillis == T));
        Document stored = json(out.get(0));
        assertEquals("2026-11-28T10:00:00Z", stored.getString("event_time"), "times as ISO-8601");
        assertEquals(3, stored.getInteger("chain_seq"));
        assertEquals(null, out.get(0).truncated);
        Document ocsf = json(out.get(1));
        assertEquals(6005, ocsf.getInteger("class_uid"));
        assertEquals(600501L, ((Number) ocsf.get("type_uid")).longValue(), "a read");
        assertEquals(
                "SELECT * FROM cards",
                ocsf.get("query_info", Document.class).getString("query_string"));
        Document ecs = json(out.get(2));
        assertEquals(
                "mysql",
                ecs.get("db", Document.class).get("system", Document.class).getString("name"));
        assertEquals(
                List.of("access"), ecs.get("event", Document.class).getList("type", String.class));
    }

    @Test
    void loginsAreAuthenticationAndActivitiesFollowTheAction() {
        Document login =
                json(
                        run(
                                        settings(StreamFormat.OCSF),
                                        event("authentication", "login_failed", null))
                                .get(0));
        assertEquals(3002, login.getInteger("class_uid"));
        assertEquals(1, login.getInteger("activity_id"));
        Document logout =
                json(
                        run(settings(StreamFormat.OCSF), event("authentication", "logout", null))
                                .get(0));
        assertEquals(2, logout.getInteger("activity_id"));
        assertEquals(Ocsf.CREATE, Ocsf.datastoreActivityId("data_write", "insert"));
        assertEquals(Ocsf.DELETE, Ocsf.datastoreActivityId("schema_change", "drop_table"));
        assertEquals(Ocsf.UPDATE, Ocsf.datastoreActivityId("account_management", "grant"));
        assertEquals(Ocsf.OTHER, Ocsf.datastoreActivityId("audit_system", "audit_stop"));
        assertEquals(Ocsf.OTHER, Ocsf.datastoreActivityId(null, null));
    }

    @Test
    void aRecordOfTheServerItselfNamesTheServerWhereOcsfWantsAnActorAndAnEndpoint() {
        IngestedEvent ie = event("audit_system", "audit_start", null);
        ie.event.user = ie.event.host = ie.event.ip = null;
        Document d = json(run(settings(StreamFormat.OCSF), ie).get(0));
        assertEquals("db-01", d.get("actor", Document.class).getString("app_name"));
        assertEquals("db-01", d.get("src_endpoint", Document.class).getString("name"));
    }

    @Test
    void aLongStatementIsCutOnTheStreamAndSaysSoTheEventUnchanged() {
        String longText = "SELECT '" + "x".repeat(StreamMessages.TEXT_CHARS) + "'";
        IngestedEvent ie = event("data_read", "select", longText);
        List<StreamMessage> out =
                run(settings(StreamFormat.AUDITPIPE, StreamFormat.OCSF, StreamFormat.ECS), ie);
        Document stored = json(out.get(0));
        assertEquals(StreamMessages.TEXT_CHARS, stored.getString("sqltext").length());
        assertEquals(ie.original, stored.getString("original"), "what is short stays whole");
        assertEquals("sqltext", out.get(0).truncated);
        ie.original = "y".repeat(StreamMessages.TEXT_CHARS + 1);
        StreamMessage both = run(settings(StreamFormat.AUDITPIPE), ie).get(0);
        assertEquals("sqltext,original", both.truncated);
        assertEquals(StreamMessages.TEXT_CHARS, json(both).getString("original").length());
        ie.original = "{}";
        assertEquals(
                "sqltext",
                new String(
                        new StreamSerializer(List.of("audit.events"))
                                .serialize(out.get(0), null, null)
                                .headers()
                                .lastHeader(StreamMessage.TRUNCATED_HEADER)
                                .value(),
                        StandardCharsets.UTF_8));
        assertTrue(json(out.get(1)).get("metadata", Document.class).getBoolean("is_truncated"));
        assertEquals(
                "sqltext", json(out.get(2)).get("labels", Document.class).getString("truncated"));
        assertEquals(longText, ie.event.sqltext, "the event the store gets keeps every character");
    }

    @Test
    void aMessageOverTheLargestIsSentWithoutItsTexts() {
        IngestedEvent ie = event("data_read", "select", "SELECT 1");
        Map<String, String> extra = new LinkedHashMap<>();
        for (int i = 0; i < 40; i++)
            extra.put(
                    "field" + i,
                    "\u0001".repeat(StreamMessages.TEXT_CHARS)); // 6 bytes each in JSON
        ie.event.extra = extra;
        for (StreamMessage m :
                run(settings(StreamFormat.AUDITPIPE, StreamFormat.OCSF, StreamFormat.ECS), ie)) {
            assertTrue(
                    m.value.length <= StreamMessages.MAX_MESSAGE_BYTES,
                    m.topic + ": " + m.value.length);
        }
        Document stored = json(run(settings(StreamFormat.AUDITPIPE), ie).get(0));
        assertFalse(
                stored.containsKey("extra")
                        || stored.containsKey("sqltext")
                        || stored.containsKey("original"));
        assertEquals(
                "sqltext,extra,original",
                run(settings(StreamFormat.AUDITPIPE), ie).get(0).truncated);
        assertEquals(40, ie.event.extra.size(), "the event keeps its extra fields");
    }

    @Test
    void alertsAreDetectionFindingsAndEcsAlertsNotRepeatedInTheStoredShape() {
        Alert a =
                Alert.of(
                                "brute_force",
                                Alert.HIGH,
                                "brute_force/db-01/app/1",
                                "db-01",
                                "app",
                                "5 failed logins")
                        .withEvidence(List.of("db-01/1", "db-01/2"), T, T + 1000);
        a.raisedAtMillis = T + 2000;
        List<StreamMessage> out = new ArrayList<>();
        new StreamMessages.OfAlerts(
                        settings(StreamFormat.AUDITPIPE, StreamFormat.OCSF, StreamFormat.ECS))
                .flatMap(a, collector(out));
        assertEquals(List.of("audit.ocsf", "audit.ecs"), out.stream().map(m -> m.topic).toList());
        Document finding = json(out.get(0));
        assertEquals(2004, finding.getInteger("class_uid"));
        assertEquals(4, finding.getInteger("severity_id"));
        assertEquals(
                List.of("db-01/1", "db-01/2"),
                finding
                        .get("finding_info", Document.class)
                        .getList("related_events", Document.class)
                        .stream()
                        .map(d -> d.getString("uid"))
                        .toList());
        assertEquals("alert", json(out.get(1)).get("event", Document.class).getString("kind"));
        assertFalse(settings(StreamFormat.AUDITPIPE).streamsAlerts());
    }

    @Test
    void theJsonIsWhatBsonReadsBackEveryCharacterEscapedAsJsonWants() {
        String hostile = "a\"b\\c\n\r\t\b\f\u0000\u0001\u001f\u007f é ✓ 𝄞 \u2028\u2029 </script>";
        Document d =
                new Document("s", hostile)
                        .append("n", 12345678901L)
                        .append("i", -7)
                        .append("t", true)
                        .append("f", false)
                        .append("z", null)
                        .append("l", List.of("x", 1, List.of()))
                        .append("m", new Document("k", hostile).append("e", new Document()));
        String json = Json.write(d);
        assertEquals(d, Document.parse(json));
        assertFalse(json.chars().anyMatch(c -> c < 0x20 || c == 0x2028 || c == 0x2029), json);
        // the bytes are strict UTF-8 (a decoder that reports malformed input takes them) of that
        // JSON
        java.nio.charset.CharsetDecoder strict =
                java.nio.charset.StandardCharsets.UTF_8
                        .newDecoder()
                        .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT);
        assertEquals(
                json,
                assertDoesNotThrow(
                        () -> strict.decode(java.nio.ByteBuffer.wrap(Json.utf8(d))).toString()));
        // an unpaired surrogate (a high one last, a low one alone) is written as '?', as
        // String.getBytes does
        Document lone = new Document("s", "x\ud834").append("t", "\udd1ey é");
        assertArrayEquals(
                "{\"s\":\"x?\",\"t\":\"?y é\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                Json.utf8(lone));
        // past the writer's first buffer, escapes among long runs; a date as ISO-8601 in UTC
        String longer = (hostile + "x".repeat(700)).repeat(12);
        Document big =
                new Document("s", longer).append("at", new java.util.Date(1_764_633_600_123L));
        Document back = Document.parse(Json.write(big));
        assertEquals(longer, back.getString("s"));
        assertEquals("2025-12-02T00:00:00.123Z", back.getString("at"));
    }

    @Test
    void theFormatsAreTheOptionsAndABadOneIsNamed() {
        assertEquals(JobOptions.STREAM_FORMAT_NAMES, StreamFormat.ids());
        assertEquals(
                List.of(StreamFormat.OCSF, StreamFormat.ECS),
                StreamFormat.parse(" ocsf, ecs,ocsf,"));
        assertTrue(StreamFormat.parse("").isEmpty());
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> StreamFormat.parse("ocsf,cef"));
        assertTrue(e.getMessage().contains("'cef'"), e.getMessage());
    }

    @Test
    void aCopyOfAnEventHasEveryField() throws IllegalAccessException {
        AuditEvent e = event("data_read", "select", "SELECT 1").event;
        e.sourceFile = "f";
        e.collector = "c";
        e.userRaw = "u";
        e.privUser = "p";
        e.osUser = "o";
        e.osLogin = "l";
        e.proxyUser = "x";
        e.authOutcome = "success";
        e.tablesError = "t";
        e.dataClasses = List.of("pci_cardholder");
        e.principalClass = "person";
        e.accessViolations = List.of("pci_cardholder");
        e.controls = List.of("C");
        e.masked = List.of("pan");
        e.inChangeWindow = true;
        e.afterHours = false;
        e.extra = new LinkedHashMap<>(Map.of("k", "v"));
        AuditEvent c = e.copy();
        assertNotSame(e, c);
        for (Field f : AuditEvent.class.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers())) continue;
            f.setAccessible(true);
            assertNotNull(f.get(e), "the test sets " + f.getName());
            assertEquals(f.get(e), f.get(c), f.getName());
        }
    }
}
