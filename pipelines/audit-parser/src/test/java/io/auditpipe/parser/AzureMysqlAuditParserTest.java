package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Azure Database for MySQL's audit logs in the three spellings its diagnostic settings deliver:
 * Event Hubs/Storage ({@code properties}), Log Analytics' AzureDiagnostics (typed suffixes) and its
 * resource-specific MySqlAuditLogs table (PascalCase). The same five records come out of each as
 * the same facts.
 */
class AzureMysqlAuditParserTest {
    @ParameterizedTest
    @ValueSource(
            strings = {
                "azure-mysql-flexible-eventhubs.json",
                "azure-mysql-flexible-azurediagnostics.json",
                "azure-mysql-flexible-mysqlauditlogs.json"
            })
    void everySpellingTellsTheSameStory(String file) throws IOException {
        FormatFixturesTest.Parsed p =
                FormatFixturesTest.parseFixture(file, AzureMysqlAuditParser.FORMAT);
        assertEquals(List.of(), p.deadLetters(), file);
        List<AuditEvent> events = p.events();
        assertEquals(5, events.size(), file);
        AuditEvent connect = events.get(0);
        assertEquals("CONNECT", connect.eventName);
        assertEquals("connection_log", connect.extra.get("class"));
        assertEquals(
                Instant.parse("2026-11-20T11:00:01.123Z").toEpochMilli(),
                connect.eventTimeMillis,
                file);
        assertEquals(11L, connect.connectionId);
        assertEquals("app", connect.user);
        assertEquals("10.0.0.5", connect.ip);
        assertEquals("shop", connect.db);
        assertEquals(AuditEvent.AUTH_SUCCESS, connect.authOutcome);
        assertNull(connect.sqltext);
        AuditEvent query = events.get(1);
        assertEquals(FormatFixturesTest.SQL, query.sqltext);
        assertEquals(0, query.status);
        assertEquals("t", events.get(2).extra.get("table"));
        AuditEvent failed = events.get(3);
        assertEquals("mallory", failed.user);
        assertEquals(1045, failed.status);
        assertEquals(AuditEvent.AUTH_FAILURE, failed.authOutcome);
        assertNull(failed.db);
        assertEquals("DISCONNECT", events.get(4).eventName);
        assertNull(events.get(4).authOutcome);
        for (AuditEvent e : events) {
            assertTrue(e.id.startsWith("db-01/2026-11-20T11:00:0"), e.id);
            assertFalse(e.extra.containsKey("event_time"), "read into the event time");
        }
        assertEquals(
                AzureMysqlAuditParser.FORMAT,
                AuditFormats.detect(
                        FormatFixturesTest.class
                                .getResourceAsStream("/fixtures/" + file)
                                .readNBytes(2000),
                        false),
                file);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "event_class_s|event_class",
                "EventClass|event_class",
                "connection_id_d|connection_id",
                "ConnectionId|connection_id",
                "TimeGenerated|time_generated",
                "sql_text|sql_text",
                "Ip|ip",
                "_ResourceId|_resourceid",
                "resourceId|resource_id",
                "IsAadAuth|is_aad_auth",
                "time|time"
            })
    void namesReduceToOneStem(String name, String stem) {
        assertEquals(stem, AzureMysqlAuditParser.stem(name));
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "{\"category\":\"MySqlSlowLogs\",\"properties\":{\"event_class\":\"x\"}}|category 'MySqlSlowLogs' is not MySqlAuditLogs",
                "{\"records\":[{\"category\":\"MySqlAuditLogs\"}]}|an Event Hubs message of several records ('records' array): one record a line is read; write each element of 'records' on a line of its own",
                "{\"category\":\"MySqlAuditLogs\",\"properties\":{\"event_time\":\"2026-11-20T11:00:01Z\"}}|missing required field 'event_class'",
                "{\"EventClass\":\"connection_log\",\"ConnectionId\":\"x1\",\"EventTime\":\"2026-11-20T11:00:01Z\"}|field 'connection_id' is not a number: 'x1'",
                "{\"EventClass\":\"connection_log\",\"ConnectionId\":\"1\"}|missing required field 'event_time' (or 'time', 'TimeGenerated')",
            })
    void badRecordsSayWhatIsWrong(String line, String reason) {
        ParseResult r =
                AuditFormats.parse(
                        line.getBytes(StandardCharsets.UTF_8),
                        new SourceDescriptor("db-01", AzureMysqlAuditParser.FORMAT, "/x", "rsyslog")
                                .inZone(ZoneId.of("UTC")));
        assertFalse(r.isOk());
        assertEquals(reason, r.failureReason());
    }
}
