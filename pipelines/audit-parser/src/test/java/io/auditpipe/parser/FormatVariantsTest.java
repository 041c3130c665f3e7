package io.auditpipe.parser;

import static io.auditpipe.parser.FormatFixturesTest.SQL;
import static io.auditpipe.parser.FormatFixturesTest.parseFixture;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.enrich.Enricher;
import io.auditpipe.enrich.EventTaxonomy;
import java.io.IOException;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What real servers write beside the layouts FormatFixturesTest tells its story in, one fixture per
 * writer (docs/formats.md, "Variants"): each record parses, none is a dead letter, and the variant
 * comes out as the same facts the plain layout gives.
 */
class FormatVariantsTest {
    static FormatFixturesTest.Parsed parsed(String file, String format) throws IOException {
        FormatFixturesTest.Parsed p = parseFixture(file, format);
        assertEquals(List.of(), p.deadLetters(), file);
        Set<String> ids = new HashSet<>();
        for (AuditEvent e : p.events()) assertTrue(ids.add(e.id), "ids are unique: " + e.id);
        return p;
    }

    /** The fixture's events, parsed as {@link #parsed} checks, {@code count} of them. */
    static List<AuditEvent> events(String file, String format, int count) throws IOException {
        List<AuditEvent> events = parsed(file, format).events();
        assertEquals(count, events.size(), file);
        return events;
    }

    static String kind(AuditEvent e) {
        EventTaxonomy.Kind k = EventTaxonomy.classify(e);
        return k.category() + "/" + k.action();
    }

    @Test
    void perconasAuditLogFilterJson() throws IOException {
        List<AuditEvent> events =
                events("percona-8.0-audit_log_filter.json", "mysql-enterprise-json", 8);
        // the first record: class audit without an event, the start of the audit trail
        assertEquals("audit", events.get(0).eventName);
        assertEquals("audit_system/audit_start", kind(events.get(0)));
        assertEquals("session/command_start", kind(events.get(2)));
        // account.user and login.user hold the whole user[priv_user] @ host [ip]
        AuditEvent log = events.get(3);
        assertEquals("app", log.user);
        assertEquals("app", log.privUser);
        assertEquals("localhost", log.host);
        assertEquals("10.0.0.5", log.ip);
        assertEquals("app[app] @ localhost [10.0.0.5]", log.userRaw);
        assertEquals(SQL, log.sqltext);
        // class query: the statement's start and its end, each the statement the server ran
        for (int i : new int[] {4, 5}) {
            AuditEvent q = events.get(i);
            assertEquals(i == 4 ? "query_start" : "query_status_end", q.eventName);
            assertEquals("query", q.extra.get("class"));
            assertEquals(SQL, q.sqltext);
            assertEquals("data_read/select", kind(q));
        }
        AuditEvent failed = events.get(6);
        assertEquals("mallory", failed.user);
        assertEquals(AuditEvent.AUTH_FAILURE, failed.authOutcome);
        assertEquals(1045, failed.status);
    }

    @Test
    void mysqlEnterpriseJsonAsServersWriteIt() throws IOException {
        List<AuditEvent> events =
                parsed("mysql-8.0-enterprise-variants.json", "mysql-enterprise-json").events();
        assertEquals(6, events.size(), "a record that follows another without a comma is read too");
        assertEquals("audit_system/audit_start", kind(events.get(0)));
        assertTrue(
                events.get(0).extra.get("startup_data").contains("\"/usr/sbin/mysqld\""),
                "\\/ is a /");
        assertEquals("SELECT path FROM files WHERE path = '/var/lib/x'", events.get(2).sqltext);
        // a failed login: no account, the attempted name in login.user
        AuditEvent failed = events.get(3);
        assertEquals("mallory", failed.user);
        assertEquals("", failed.privUser);
        assertEquals(AuditEvent.AUTH_FAILURE, failed.authOutcome);
        assertEquals(
                "tcp/ip",
                failed.extra
                        .get("connection_data")
                        .replaceAll(".*\"connection_type\":\"([^\"]*)\".*", "$1"));
        // general_data without a query (a Ping)
        AuditEvent ping = events.get(4);
        assertNull(ping.sqltext);
        assertTrue(ping.extra.get("general_data").contains("Ping"));
        assertEquals("session/status", kind(ping));
    }

    @Test
    void mariadbWithPortsTlsAndRenames() throws IOException {
        List<AuditEvent> events = events("mariadb-12-server_audit.log", "mariadb-audit", 9);
        AuditEvent connect = events.get(0);
        assertEquals("10.0.0.5", connect.host);
        assertEquals("52102", connect.extra.get("client_port"));
        assertEquals("TLSv1.3", connect.extra.get("more"));
        assertEquals(AuditEvent.AUTH_SUCCESS, connect.authOutcome);
        // \\n is a backslash and an n, \n a line break
        assertEquals(
                "SELECT note FROM t WHERE note = 'a\\nb' OR note = 'c\nd'", events.get(1).sqltext);
        assertNull(events.get(2).status, "a table event's retcode is empty");
        try (Enricher enricher = new Enricher(ComplianceSettings.defaults())) {
            AuditEvent read = enricher.enrich(events.get(2));
            assertEquals(List.of("shop.t"), read.tables);
            AuditEvent rename = enricher.enrich(events.get(4));
            assertEquals(List.of("shop.t", "shop.t_old"), rename.tables);
            assertEquals("schema_change/rename_table", rename.category + "/" + rename.action);
        }
        AuditEvent socket = events.get(5);
        assertEquals("localhost", socket.host);
        assertFalse(socket.extra.containsKey("client_port"), "a socket has no port");
        assertEquals(AuditEvent.AUTH_FAILURE, events.get(6).authOutcome);
        assertEquals("203.0.113.9", events.get(6).host);
        assertEquals("::1", events.get(8).host, "an IPv6 address is no host:port");
    }

    @Test
    void mariadbWithItsOwnTimestampFormat() throws IOException {
        List<AuditEvent> events = events("mariadb-10.6-timestamp-format.log", "mariadb-audit", 3);
        assertEquals(
                Instant.parse("2026-11-20T11:00:01Z").toEpochMilli(),
                events.get(0).eventTimeMillis,
                "the offset is the record's");
        assertEquals(
                Instant.parse("2026-11-20T11:00:02.481Z").toEpochMilli(),
                events.get(1).eventTimeMillis);
        assertEquals("SELECT 1", events.get(1).sqltext);
        assertEquals(
                "mariadb-audit",
                AuditFormats.detect(
                        "20261120T12:00:01.000000+0100,db-01,app,localhost,4,0,CONNECT,,,0"
                                .getBytes(),
                        false));
        // a time in RFC 3339's shape followed by a comma is the record's own, no syslog header
        byte[] iso =
                "2026-11-20T12:00:01+01:00,db-01,app,localhost,4,0,CONNECT,,,0"
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertEquals("mariadb-audit", AuditFormats.detect(iso, false));
        ParseResult r =
                AuditFormats.parse(
                        iso,
                        new SourceDescriptor("db-01", "mariadb-audit", "/x", "rsyslog")
                                .inZone(java.time.ZoneId.of("UTC")));
        assertTrue(r.isOk(), r::failureReason);
        assertEquals(
                Instant.parse("2026-11-20T11:00:01Z").toEpochMilli(), r.event().eventTimeMillis);
    }

    @Test
    void mcafeeJsonWithAKeyWrittenTwice() throws IOException {
        List<AuditEvent> events = events("mcafee-1.1-repeated-keys.json", "mcafee-json", 2);
        AuditEvent same = events.get(0);
        assertEquals("root", same.osUser);
        assertEquals("918566", same.extra.get("pid"));
        assertFalse(same.extra.containsKey("os_user#2"), "the same value twice is one");
        AuditEvent different = events.get(1);
        assertEquals("app", different.osUser);
        assertEquals("deploy", different.extra.get("os_user#2"));
        assertEquals("100", different.extra.get("pid"));
        assertEquals("200", different.extra.get("pid#2"));
    }

    @Test
    void auroraFilesAndTheCloudWatchExportGiveTheSameEvents() throws IOException {
        List<AuditEvent> downloaded = parsed("aurora-mysql-3-audit.log", "aurora-audit").events();
        List<AuditEvent> exported =
                parsed("aurora-mysql-3-cloudwatch-export.log", "aurora-audit").events();
        assertEquals(5, downloaded.size(), "the last row, without a final newline, too");
        Set<String> a = new HashSet<>(), b = new HashSet<>();
        downloaded.forEach(e -> a.add(e.id));
        exported.forEach(e -> b.add(e.id));
        assertEquals(a, b, "a row has one id, downloaded or exported");
        AuditEvent connect = downloaded.get(0);
        assertEquals(Instant.parse("2026-11-20T11:00:01Z").toEpochMilli(), connect.eventTimeMillis);
        assertEquals(AuditEvent.AUTH_SUCCESS, connect.authOutcome);
        assertEquals("10.0.0.5", connect.host);
        assertEquals(
                AuditEvent.AUTH_FAILURE,
                downloaded.get(1).authOutcome,
                "rows out of time order are read as they come");
        AuditEvent query = downloaded.get(2);
        assertEquals(
                "SELECT name, note\n  FROM t WHERE note = 'a, b < c & d'",
                query.sqltext,
                "a comma inside the quotes");
        assertEquals(
                Instant.parse("2026-11-20T11:00:02.250Z").toEpochMilli(), query.eventTimeMillis);
        assertTrue(query.recordId.startsWith("1795172402250000-11-5-"), query.recordId);
        assertEquals(
                "aurora-audit",
                AuditFormats.detect(
                        ("2026-11-20T11:00:05.100Z "
                                        + "1795172401000123,ip-10-0-1-20,app,"
                                        + "10.0.0.5,11,0,CONNECT,shop,,0")
                                .getBytes(),
                        false));
    }

    @Test
    void rdsForMysqlsAuditPlugin() throws IOException {
        FormatFixturesTest.Parsed p =
                parseFixture(
                        "rds-mysql-8.0-server_audit.log",
                        "mariadb-audit",
                        java.time.ZoneId.of("America/New_York"));
        assertEquals(List.of(), p.deadLetters());
        List<AuditEvent> events = p.events();
        assertEquals(6, events.size(), "the last record, without a final newline, too");
        assertEquals(
                Instant.parse("2026-11-20T11:00:01Z").toEpochMilli(),
                events.get(0).eventTimeMillis,
                "server-local time");
        assertEquals("TCP/IP", events.get(0).extra.get("more"), "the connection type");
        AuditEvent query = events.get(1);
        assertEquals("SELECT name FROM t WHERE note = 'a, b'", query.sqltext);
        assertEquals(0, query.status);
        assertFalse(query.extra.containsKey("more"), "two empty fields after the retcode: nothing");
        assertEquals(AuditEvent.AUTH_FAILURE, events.get(2).authOutcome);
        assertEquals("SOCKET", events.get(3).extra.get("more"));
    }
}
