package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Records in a syslog envelope (fixtures/syslog-wrapped.log: each wrapping docs/formats.md names,
 * one line each; the CLI's detection reads the same file).
 */
class SyslogEnvelopeTest {
    private static final long RECEIVED = Instant.parse("2026-11-27T12:00:00Z").toEpochMilli();
    private static final SourceDescriptor SYSLOG =
            source(SyslogRecordParser.FORMAT, ZoneOffset.UTC);

    private static SourceDescriptor source(String format, ZoneId zone) {
        return new SourceDescriptor("db", format, "/var/log/audit-syslog.log", "rsyslog")
                .inZone(zone);
    }

    static List<String> fixture() throws IOException {
        try (InputStream in =
                SyslogEnvelopeTest.class.getResourceAsStream("/fixtures/syslog-wrapped.log")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static AuditEvent ok(String line) {
        ParseResult r = AuditFormats.parse(utf8(line), SYSLOG, RECEIVED);
        assertTrue(r.isOk(), () -> "expected an event from " + line + ", got " + r);
        return r.event();
    }

    private static String failure(String line, SourceDescriptor source) {
        ParseResult r = AuditFormats.parse(utf8(line), source, RECEIVED);
        assertFalse(r.isOk(), () -> "expected a failure from " + line + ", got " + r);
        return r.failureReason();
    }

    @Test
    void every_wrapping_of_the_fixture_parses_in_the_format_its_body_has() throws IOException {
        List<String> formats = fixture().stream().map(l -> ok(l).format).toList();
        assertEquals(
                List.of(
                        "mariadb-audit",
                        "mariadb-audit",
                        "mariadb-audit",
                        "mariadb-audit",
                        "mariadb-audit",
                        "percona-json",
                        "percona-json",
                        "mysql-enterprise-json",
                        "mcafee-json",
                        "percona-xml"),
                formats);
    }

    @Test
    void mariadb_through_syslog_takes_the_headers_time_and_keeps_its_info() throws IOException {
        List<String> lines = fixture();
        AuditEvent local =
                ok(lines.get(0)); // no host in the header: what a program sends to /dev/log
        assertEquals(Instant.parse("2026-04-13T14:43:13Z").toEpochMilli(), local.eventTimeMillis);
        assertEquals("user1", local.user);
        assertEquals("172.18.0.1", local.host);
        assertEquals(32L, local.connectionId);
        assertEquals(1146, local.status);
        assertEquals("SELECT * FROM test WHERE 0=1", local.sqltext);
        assertEquals("eff8a68bcd7f", local.extra.get("serverhost"));
        assertEquals("columnstore-1", local.extra.get("syslog_info"));
        assertEquals("mysql-server_auditing", local.extra.get("syslog_tag"));
        assertNull(local.extra.get("syslog_host"));
        assertTrue(local.recordId.startsWith("20260413T144313-32-394-"), local.recordId);

        AuditEvent fromFile = ok(lines.get(1));
        assertEquals("centos", fromFile.extra.get("syslog_host"));
        assertEquals(
                "SELECT grade, AVG(loan_amnt) avg FROM loanstats GROUP BY grade ORDER BY grade",
                fromFile.sqltext);

        AuditEvent noInfo = ok(lines.get(2));
        assertEquals("db-host", noInfo.extra.get("serverhost"));
        assertNull(noInfo.extra.get("syslog_info"));
        assertEquals(AuditEvent.AUTH_SUCCESS, noInfo.authOutcome);
        assertEquals(Instant.parse("2026-11-07T09:00:01Z").toEpochMilli(), noInfo.eventTimeMillis);
        assertEquals(AuditEvent.AUTH_FAILURE, ok(lines.get(3)).authOutcome);

        AuditEvent ownTime =
                ok(lines.get(4)); // a file line forwarded: its own time, the file's record id
        assertEquals(Instant.parse("2026-11-22T19:15:00Z").toEpochMilli(), ownTime.eventTimeMillis);
        assertTrue(ownTime.recordId.startsWith("20261122T191500-3-3-"), ownTime.recordId);
    }

    @Test
    void the_record_keeps_its_own_time_and_id_and_the_header_names_the_sender() throws IOException {
        List<String> lines = fixture();
        AuditEvent rfc5424 = ok(lines.get(5));
        assertEquals("4_2026-11-22T09:00:00", rfc5424.recordId);
        assertEquals(Instant.parse("2026-11-22T09:15:30Z").toEpochMilli(), rfc5424.eventTimeMillis);
        assertEquals("db-02", rfc5424.extra.get("syslog_host"));
        assertEquals("percona-audit", rfc5424.extra.get("syslog_tag"));
        assertEquals("db/4_2026-11-22T09:00:00", rfc5424.id);
        // the same message as a receiver hands it on with its priority taken off (Fluentd's
        // in_syslog)
        String line = lines.get(5);
        AuditEvent withoutPri = ok(line.substring(line.indexOf('>') + 1));
        assertEquals(rfc5424.recordId, withoutPri.recordId);
        assertEquals("db-02", withoutPri.extra.get("syslog_host"));
        assertEquals("percona-audit", withoutPri.extra.get("syslog_tag"));

        assertEquals(
                "percona-audit",
                ok(lines.get(6)).extra.get("syslog_tag"),
                "the pid is not the tag's");
        assertEquals("audit-filter", ok(lines.get(7)).extra.get("syslog_tag"));
        AuditEvent tagOnly = ok(lines.get(8));
        assertEquals("mysql_audit_log", tagOnly.extra.get("syslog_tag"));
        assertEquals("SELECT 4", tagOnly.sqltext);

        AuditEvent xml =
                ok(lines.get(9)); // the escaped newlines turned back: the XML reads as written
        assertEquals("3_2026-11-22T09:00:00", xml.recordId);
        assertEquals("SELECT name\n  FROM t", xml.sqltext);
    }

    @Test
    void the_syslog_handlers_numbers_start_again_with_the_server_so_its_ids_are_told_apart_by_time()
            throws IOException {
        String line = fixture().get(6);
        AuditEvent first = ok(line);
        assertEquals(
                "5_1970-01-01T00:00:00", first.recordId, "the record id as the plugin wrote it");
        assertEquals("db/5_1970-01-01T00:00:00@2026-11-22T09:00:03Z", first.id);
        assertEquals(
                RecordNumbers.NONE,
                RecordNumbers.number(first),
                "no sequence: the chain keeps its id, the gap rule skips it");
        AuditEvent afterRestart =
                ok(line.replace("2026-11-22T09:00:03 UTC", "2026-11-22T10:30:00 UTC"));
        assertFalse(first.id.equals(afterRestart.id));
        assertEquals(
                4L,
                RecordNumbers.number(ok(fixture().get(5))),
                "a plugin's own log start is a sequence");
    }

    @Test
    void a_named_format_reads_its_records_in_an_envelope_too() throws IOException {
        String line = fixture().get(5);
        ParseResult r =
                AuditFormats.parse(
                        utf8(line), source(PerconaJsonParser.FORMAT, ZoneOffset.UTC), RECEIVED);
        assertTrue(r.isOk(), r::toString);
        assertEquals("percona-json", r.event().format);
    }

    @ParameterizedTest
    @CsvSource({
        // received, header time, the instant taken: a time at most a day ahead of its receipt keeps
        // the year
        "2026-11-27T12:00:00Z, Nov 28 11:00:00, 2026-11-28T11:00:00Z",
        "2026-11-27T12:00:00Z, Nov 28 13:00:00, 2025-11-28T13:00:00Z",
        "2027-01-01T00:05:00Z, Dec 31 23:59:00, 2026-12-31T23:59:00Z",
        "2026-12-31T23:59:00Z, Jan  1 00:01:00, 2027-01-01T00:01:00Z",
        "2027-03-01T10:00:00Z, Feb 29 10:00:00, 2024-02-29T10:00:00Z",
    })
    void a_time_without_a_year_takes_the_year_that_puts_it_at_most_a_day_after_its_receipt(
            String received, String header, String expected) throws Exception {
        SyslogEnvelope e =
                SyslogEnvelope.read(
                        utf8(header + " h t: x"),
                        ZoneOffset.UTC,
                        Instant.parse(received).toEpochMilli());
        assertNotNull(e);
        assertEquals(Instant.parse(expected).toEpochMilli(), e.timeMillis());
    }

    @Test
    void a_time_without_an_offset_is_the_sources_time_zone() throws Exception {
        String line =
                "Nov  7 09:00:01 db-host mysql-server_auditing:  db-host,app,10.0.0.5,11,0,CONNECT,shop,,0";
        ParseResult r =
                AuditFormats.parse(
                        utf8(line),
                        source(SyslogRecordParser.FORMAT, ZoneId.of("Europe/Berlin")),
                        RECEIVED);
        assertEquals(
                Instant.parse("2026-11-07T08:00:01Z").toEpochMilli(), r.event().eventTimeMillis);
        assertTrue(
                r.event().recordId.startsWith("20261107T090001-11-0-"),
                "the id has the local time, as in the file");
        SyslogEnvelope rfc3339 =
                SyslogEnvelope.read(
                        utf8("2026-11-07T09:00:01+01:00 h t: x"),
                        ZoneId.of("Asia/Tokyo"),
                        RECEIVED);
        assertEquals(
                Instant.parse("2026-11-07T08:00:01Z").toEpochMilli(),
                rfc3339.timeMillis(),
                "an offset written wins");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{\"audit_record\":{\"name\":\"Query\"}}",
                "20261122 19:15:00,db-host,root,localhost,3,3,QUERY,shop,'select 1',0",
                "<AUDIT_RECORD>",
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
                "\"Query\",\"3_2026-11-22T09:00:00\",\"2026-11-22T09:00:02 UTC\"",
                "  \"timestamp\": \"2026-11-22 09:00:04\",",
                ", { \"timestamp\": \"2026-11-22 09:00:04\" }",
                "plain words without a colon",
            })
    void a_record_of_any_format_has_no_envelope(String line) throws Exception {
        assertNull(SyslogEnvelope.read(utf8(line), ZoneOffset.UTC, RECEIVED));
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "Feb 30 12:00:00 h t: x|'Feb 30 12:00:00' is no date",
                "<13>1 2026-13-45T10:00:00Z h app - - - x|'2026-13-45T10:00:00Z' is not RFC 3339",
                "<13>1 2026-11-27T10:00:00Z h app|cut short",
                "<13>1 2026-11-27T10:00:00Z h app - - [open x=\"y\" x|not closed",
                "Nov 27 10:61:00 h t: x|is no date",
            })
    void a_header_that_cannot_be_read_is_a_failure_saying_why(String line, String reason) {
        String r = failure(line, SYSLOG);
        assertTrue(r.contains(reason), r);
    }

    @Test
    void a_message_that_holds_no_audit_record_is_a_failure_naming_its_sender() {
        String r =
                failure(
                        "Nov 27 11:59:58 db-host sshd[811]: Accepted publickey for admin from 10.0.0.7",
                        SYSLOG);
        assertTrue(r.contains("host db-host, tag sshd"), r);
        assertTrue(r.contains("it begins 'Accepted publickey for admin"), r);
        String empty =
                failure(
                        "Nov 27 11:59:58 db-host mysql-server_auditing: ",
                        source(MariadbAuditParser.FORMAT, ZoneOffset.UTC));
        assertTrue(empty.contains("no record after its header"), empty);
        String bad =
                failure(
                        "Nov 27 11:59:58 db-host mysql-server_auditing:  db-host,app,10.0.0.5,x,0,CONNECT,shop,,0",
                        source(MariadbAuditParser.FORMAT, ZoneOffset.UTC));
        assertTrue(
                bad.contains("connection id 'x' is not a number")
                        && bad.contains("host db-host, tag mysql-server_auditing"),
                bad);
    }

    @Test
    void escaped_control_characters_are_turned_back_only_in_a_multi_line_record() throws Exception {
        SyslogEnvelope xml =
                SyslogEnvelope.read(utf8("h: <A>#012#011<B/>#0129</A>"), ZoneOffset.UTC, RECEIVED);
        assertEquals("<A>\n\t<B/>\n9</A>", new String(xml.body(), StandardCharsets.UTF_8));
        SyslogEnvelope json =
                SyslogEnvelope.read(utf8("h: {\"q\":\"select '#012'\"}"), ZoneOffset.UTC, RECEIVED);
        assertEquals(
                "{\"q\":\"select '#012'\"}",
                new String(json.body(), StandardCharsets.UTF_8),
                "a one-line record is as written");
        SyslogEnvelope pretty =
                SyslogEnvelope.read(
                        utf8("h: {#012  \"class\": \"x\"#012}"), ZoneOffset.UTC, RECEIVED);
        assertEquals("{\n  \"class\": \"x\"\n}", new String(pretty.body(), StandardCharsets.UTF_8));
    }

    @Test
    void the_same_line_received_the_same_day_is_the_same_event() throws IOException {
        for (String line : fixture()) {
            AuditEvent a = ok(line);
            ParseResult again = AuditFormats.parse(utf8(line), SYSLOG, RECEIVED + 3_600_000L);
            assertEquals(a.id, again.event().id, line);
        }
    }

    @Test
    void the_header_is_looked_for_only_in_its_first_characters() {
        String longTag = "Nov 27 11:59:58 db-host " + "t".repeat(SyslogEnvelope.MAX_HEADER) + ": x";
        String r = failure(longTag, SYSLOG); // no tag found within them: a host and then no record
        assertTrue(r.contains("no audit record of a known format"), r);
    }
}
