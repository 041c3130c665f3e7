package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The fixture is what a real MariaDB 10.11.19 (Debian 12) wrote with server_audit (events CONNECT,
 * QUERY, TABLE) for a session that created a table, inserted a quoted string, created a user,
 * granted to it, and a failed and a good login of that user (only the host name was replaced).
 */
class MariadbAuditParserTest {
    private static final SourceDescriptor MDB =
            new SourceDescriptor(
                    "mdb-01",
                    MariadbAuditParser.FORMAT,
                    "/var/log/mysql/server_audit.log",
                    "rsyslog");
    private final MariadbAuditParser parser = new MariadbAuditParser();

    private static List<String> fixture() throws IOException {
        try (InputStream in =
                MariadbAuditParserTest.class.getResourceAsStream(
                        "/fixtures/mariadb-10.11-server_audit.log")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
    }

    private AuditEvent ok(String line) {
        ParseResult r = parser.parse(line.getBytes(StandardCharsets.UTF_8), MDB);
        assertTrue(r.isOk(), () -> "expected an event from " + line + ", got " + r);
        return r.event();
    }

    private String failure(String line) {
        ParseResult r = parser.parse(line.getBytes(StandardCharsets.UTF_8), MDB);
        assertFalse(r.isOk(), () -> "expected a failure, got " + r);
        return r.failureReason();
    }

    @Test
    void everyLineTheServerWroteIsAnEventWithAnIdOfItsOwn() throws IOException {
        Set<String> ids = new HashSet<>();
        for (String line : fixture()) {
            AuditEvent e = ok(line);
            assertTrue(ids.add(e.id), "unique: " + e.id);
            assertEquals(e.id, ok(line).id, "the same line, the same id");
        }
        assertEquals(35, ids.size());
    }

    @Test
    void aQueryKeepsItsStatementUnescaped() {
        AuditEvent e =
                ok(
                        "20261122 19:15:00,db-host,root,localhost,3,3,QUERY,shop,'INSERT INTO shop.t VALUES "
                                + "(1,\\'it\\'\\'s, \"quoted\"\\\\nnew line\\')',0");
        assertEquals("INSERT INTO shop.t VALUES (1,'it''s, \"quoted\"\\nnew line')", e.sqltext);
        assertEquals("insert", e.commandClass);
        assertEquals("QUERY", e.eventName);
        assertEquals("root", e.user);
        assertEquals("localhost", e.host);
        assertEquals("shop", e.db);
        assertEquals(3L, e.connectionId);
        assertEquals(0, e.status);
        assertEquals(Instant.parse("2026-11-22T19:15:00Z").toEpochMilli(), e.eventTimeMillis);
        assertEquals("db-host", e.extra.get("serverhost"));
        assertEquals("3", e.extra.get("query_id"));
        assertTrue(e.recordId.startsWith("20261122T191500-3-3-"), e.recordId);
        assertEquals("mdb-01/" + e.recordId, e.id);
        assertNull(e.authOutcome);
    }

    @Test
    void newlinesAndTabsComeBack() {
        assertEquals(
                "SELECT 1,\n 'a\tb'",
                ok("20261122 19:15:15,db-host,root,localhost,6,10,QUERY,shop,"
                                + "'SELECT 1,\\n \\'a\\tb\\'',0")
                        .sqltext);
    }

    @Test
    void logins() {
        AuditEvent failed = ok("20261122 19:15:00,db-host,bob,localhost,4,0,FAILED_CONNECT,,,1045");
        assertEquals(AuditEvent.AUTH_FAILURE, failed.authOutcome);
        assertEquals(1045, failed.status);
        assertNull(failed.db);
        assertEquals(
                AuditEvent.AUTH_SUCCESS,
                ok("20261122 19:15:00,db-host,bob,localhost,5,0,CONNECT,,,0").authOutcome);
        assertNull(ok("20261122 19:15:00,db-host,bob,localhost,5,0,DISCONNECT,,,0").authOutcome);
        AuditEvent typed = ok("20261122 19:15:00,db-host,bob,localhost,5,0,CONNECT,shop,,0,tcp/ip");
        assertEquals(
                "tcp/ip", typed.extra.get("more"), "newer versions append the connection type");
    }

    @Test
    void aTableEventNamesItsTable() {
        AuditEvent e = ok("20261122 19:15:00,db-host,root,localhost,3,5,WRITE,mysql,global_priv,");
        assertEquals("WRITE", e.eventName);
        assertEquals("global_priv", e.extra.get("object"));
        assertEquals("mysql", e.db);
        assertNull(e.status, "table events have no retcode");
        assertNull(e.sqltext);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "20261122 19:15:00,db-host,root|not a server_audit record: 3 of at least 10 comma-separated fields",
                "2026/11/22 19:15:00,h,u,h,3,1,QUERY,,'x',0|timestamp '2026/11/22 19:15:00' is not yyyyMMdd HH:mm:ss (nor another server_audit_timestamp_format of a date, a time, a fraction and an offset)",
                "20261122 25:15:00,h,u,h,3,1,QUERY,,'x',0|timestamp '20261122 25:15:00' is not yyyyMMdd HH:mm:ss (nor another server_audit_timestamp_format of a date, a time, a fraction and an offset)",
                "2026-11-22T19:15:00+2500,h,u,h,3,1,QUERY,,'x',0|timestamp '2026-11-22T19:15:00+2500' is not yyyyMMdd HH:mm:ss (nor another server_audit_timestamp_format of a date, a time, a fraction and an offset)",
                "20261122 19:15:00,h,u,h,x,1,QUERY,,'x',0|connection id 'x' is not a number",
                "20261122 19:15:00,h,u,h,3,1,query,,'x',0|operation 'query' is not an upper-case word",
                "20261122 19:15:00,h,u,h,3,1,QUERY,,'SELECT 1|the quoted object is not closed (the line was cut?)",
                "20261122 19:15:00,h,u,h,3,1,QUERY,,'a'b',0|the quoted object ends at character 37 but no comma follows it",
                "20261122 19:15:00,h,u,h,3,1,QUERY,,'x',zero|retcode 'zero' is not a number",
                "20261122 19:15:00,h,u,h,3,1,QUERY,,'x'|not a server_audit record: 9 of at least 10 comma-separated fields",
            })
    void badLinesSayWhatIsWrong(String line, String reason) {
        assertEquals(reason, failure(line));
    }

    @Test
    void firstKeyword() {
        assertEquals("select", MariadbAuditParser.firstKeyword("  (SELECT 1)"));
        assertEquals("grant", MariadbAuditParser.firstKeyword("GRANT SELECT ON x.* TO y"));
        assertNull(MariadbAuditParser.firstKeyword("/* comment */ SELECT 1"));
    }

    @Test
    void localTimeIsReadInTheSourcesTimeZone() {
        SourceDescriptor berlin =
                SourceDescriptor.parseKey(
                        ("{\"v\":1,\"server\":\"mdb-01\",\"format\":\"mariadb-audit\","
                                        + "\"timezone\":\"Europe/Berlin\"}")
                                .getBytes(StandardCharsets.UTF_8));
        ParseResult r =
                parser.parse(
                        "20260715 14:00:00,h,u,h,3,0,CONNECT,,,0".getBytes(StandardCharsets.UTF_8),
                        berlin);
        assertEquals(
                Instant.parse("2026-07-15T12:00:00Z").toEpochMilli(),
                r.event().eventTimeMillis,
                "CEST = UTC+2");
        assertEquals(
                ok("20260715 14:00:00,h,u,h,3,0,CONNECT,,,0").recordId,
                r.event().recordId,
                "the id keeps the time as written");
    }

    @Test
    void anUnknownTimeZoneInTheKeyIsABadKey() {
        SourceDescriptor.InvalidSourceKeyException e =
                org.junit.jupiter.api.Assertions.assertThrows(
                        SourceDescriptor.InvalidSourceKeyException.class,
                        () ->
                                SourceDescriptor.parseKey(
                                        "{\"v\":1,\"server\":\"s\",\"format\":\"mariadb-audit\",\"timezone\":\"Mars/Olympus\"}"
                                                .getBytes(StandardCharsets.UTF_8)));
        assertEquals(
                "message key field 'timezone' is not a time zone: 'Mars/Olympus'", e.getMessage());
    }
}
