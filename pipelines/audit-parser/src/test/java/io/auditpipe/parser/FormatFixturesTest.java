package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.TextTable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * One story told in every format: the audit plugin starts, {@code app} connects from 10.0.0.5 and
 * runs a two-line statement with quotes and XML specials, {@code mallory} fails to log in (1045),
 * {@code app} disconnects. The fixtures follow each writer's documented layout and source
 * (docs/formats.md names them): files are framed as the collectors frame them, and the same facts
 * must come out of each.
 */
class FormatFixturesTest {
    static final String SQL = "SELECT name\n  FROM t WHERE note = \"a < b & c\"";

    record Parsed(List<AuditEvent> events, List<String> deadLetters, int framing) {}

    static Parsed parseFixture(String file, String format) throws IOException {
        return parseFixture(file, format, ZoneId.of("UTC"));
    }

    static Parsed parseFixture(String file, String format, ZoneId zone) throws IOException {
        String text;
        try (InputStream in = FormatFixturesTest.class.getResourceAsStream("/fixtures/" + file)) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        SourceDescriptor source =
                new SourceDescriptor("db-01", format, "/var/lib/mysql/" + file, "rsyslog")
                        .inZone(zone);
        List<Framing.Framer.Record> records = AuditFormats.forName(format).framing().records(text);
        List<AuditEvent> events = new ArrayList<>();
        List<String> dead = new ArrayList<>();
        int framing = 0;
        for (Framing.Framer.Record r : records) {
            ParseResult result =
                    AuditFormats.parse(r.text.getBytes(StandardCharsets.UTF_8), source);
            if (result.isOk()) events.add(result.event());
            else if (result.isFraming()) framing++;
            else dead.add("line " + r.firstLine + ": " + result.failureReason());
        }
        return new Parsed(events, dead, framing);
    }

    @ParameterizedTest(name = "{0} as {1}")
    @CsvSource({
        "percona-8.0-old.xml, percona-xml, 5, 1",
        "percona-8.0-new.xml, percona-xml, 5, 1",
        "percona-8.0.csv, percona-csv, 5, 0",
        "mysql-8.0-enterprise-new.xml, mysql-enterprise-xml, 5, 1",
        "percona-8.0-audit_log_filter-old.xml, mysql-enterprise-xml, 5, 1",
        "mysql-5.7-enterprise-pretty.json, mysql-enterprise-json, 6, 1",
        "mysql-8.0-enterprise-compact.json, mysql-enterprise-json, 6, 1",
        "mcafee-1.1-audit.json, mcafee-json, 5, 0",
    })
    void everyFormatTellsTheSameStory(String file, String format, int records, int framingPieces)
            throws IOException {
        Parsed p = parseFixture(file, format);
        assertEquals(List.of(), p.deadLetters(), file);
        assertEquals(records, p.events().size(), file);
        // framed by the last line, the file's closing </AUDIT> or ']' is one piece of its own:
        // counted, not a dead letter
        assertEquals(framingPieces, p.framing(), () -> file + ": framing pieces");

        Set<String> ids = new HashSet<>();
        for (AuditEvent e : p.events()) {
            assertTrue(ids.add(e.id), "ids are unique: " + e.id);
            assertTrue(e.id.startsWith("db-01/"), e.id);
            assertEquals(format, e.format);
            assertEquals("db-01", e.server);
        }

        List<AuditEvent> connects = p.events().stream().filter(AuditEvent::isLoginEvent).toList();
        assertEquals(2, connects.size(), () -> file + ": two logins in " + p.events());
        AuditEvent good =
                connects.stream().filter(e -> !e.isFailedLogin()).findFirst().orElseThrow();
        AuditEvent bad =
                connects.stream().filter(AuditEvent::isFailedLogin).findFirst().orElseThrow();
        assertEquals("app", good.user);
        assertEquals(11L, good.connectionId);
        assertEquals("10.0.0.5", good.ip);
        assertEquals(Instant.parse("2026-11-22T09:00:01Z").toEpochMilli(), good.eventTimeMillis);
        assertEquals("mallory", bad.user);
        assertEquals("203.0.113.9", bad.ip);
        assertEquals(Instant.parse("2026-11-22T09:00:03Z").toEpochMilli(), bad.eventTimeMillis);
        if (!format.equals("mcafee-json")) {
            assertEquals(1045, bad.status);
        }

        AuditEvent query =
                p.events().stream()
                        .filter(e -> SQL.equals(e.sqltext))
                        .findFirst()
                        .orElseThrow(
                                () ->
                                        new AssertionError(
                                                file
                                                        + ": no event with the statement in "
                                                        + p.events()));
        assertEquals("app", query.user);
        assertEquals(11L, query.connectionId);
        assertEquals("select", query.commandClass);
        assertEquals(Instant.parse("2026-11-22T09:00:02Z").toEpochMilli(), query.eventTimeMillis);
        assertNull(query.authOutcome);
        // PCI DSS 10.2.2: user, type, time, outcome, origin and the data touched, from every format
        assertEquals(AuditEvent.AUTH_SUCCESS, query.outcome());
        assertEquals(AuditEvent.AUTH_FAILURE, bad.outcome());
        assertEquals("10.0.0.5", query.ip);
        assertTrue(query.eventName != null && !query.eventName.isEmpty());

        // parsing is deterministic: the same file gives the same ids (a replay collapses onto them)
        Parsed again = parseFixture(file, format);
        assertEquals(
                p.events().stream().map(e -> e.id).toList(),
                again.events().stream().map(e -> e.id).toList());
    }

    @Test
    void percona_xml_and_csv_carry_the_plugins_record_id_and_the_account_string()
            throws IOException {
        for (String[] f :
                new String[][] {
                    {"percona-8.0-old.xml", "percona-xml"},
                    {"percona-8.0-new.xml", "percona-xml"},
                    {"percona-8.0.csv", "percona-csv"}
                }) {
            Parsed p = parseFixture(f[0], f[1]);
            AuditEvent query =
                    p.events().stream()
                            .filter(e -> "Query".equals(e.eventName))
                            .findFirst()
                            .orElseThrow();
            assertEquals("3_2026-11-22T09:00:00", query.recordId, f[0]);
            assertEquals("db-01/3_2026-11-22T09:00:00", query.id, f[0]);
            assertEquals("app[app] @ localhost [10.0.0.5]", query.userRaw, f[0]);
            assertEquals("app", query.privUser, f[0]);
            assertEquals("shop", query.db, f[0]);
            AuditEvent audit = p.events().get(0);
            assertEquals("Audit", audit.eventName, f[0]);
            assertEquals("8.0.39-30", audit.extra.get("mysql_version"), f[0]);
        }
    }

    @Test
    void audit_log_filter_writes_local_time_without_a_zone_which_the_sources_time_zone_reads()
            throws IOException {
        assertEquals(
                Instant.parse("2026-11-22T08:00:00Z"),
                firstInBerlin("percona-8.0-audit_log_filter-old.xml"));
        // a timestamp that says UTC stays UTC whatever the source's zone
        assertEquals(
                Instant.parse("2026-11-22T09:00:00Z"),
                firstInBerlin("mysql-8.0-enterprise-new.xml"));
    }

    /** The time of a fixture's first event, its source's time zone Europe/Berlin. */
    private static Instant firstInBerlin(String fixture) throws IOException {
        Parsed p = parseFixture(fixture, "mysql-enterprise-xml", ZoneId.of("Europe/Berlin"));
        return Instant.ofEpochMilli(p.events().get(0).eventTimeMillis);
    }

    @Test
    void enterprise_json_identity_is_timestamp_and_id_and_the_class_data_is_mapped()
            throws IOException {
        Parsed p = parseFixture("mysql-5.7-enterprise-pretty.json", "mysql-enterprise-json");
        AuditEvent read =
                p.events().stream()
                        .filter(e -> "read".equals(e.eventName))
                        .findFirst()
                        .orElseThrow();
        assertEquals("2026-11-22T09:00:02_1", read.recordId);
        assertEquals("table_access", read.extra.get("class"));
        assertEquals("t", read.extra.get("table"));
        assertEquals("shop", read.db);
        AuditEvent startup = p.events().get(0);
        assertEquals("startup", startup.eventName);
        assertTrue(
                startup.extra
                        .get("startup_data")
                        .contains(
                                "\"args\":[\"/usr/sbin/mysqld\",\"--loose-audit-log-format=JSON\""),
                startup.extra.get("startup_data"));
        for (AuditEvent e : p.events()) {
            for (String key : e.extra.keySet()) { // MongoDB and FerretDB refuse such keys
                assertFalse(key.contains(".") || key.startsWith("$"), key);
            }
        }
        AuditEvent connect = p.events().get(1);
        assertEquals("app", connect.privUser);
        assertEquals("%", connect.extra.get("priv_host"));
        assertEquals("{\"connection_type\":\"ssl\"}", connect.extra.get("connection_data"));
        // the compact layout gives the very same ids
        Parsed compact = parseFixture("mysql-8.0-enterprise-compact.json", "mysql-enterprise-json");
        assertEquals(
                p.events().stream().map(e -> e.id).toList(),
                compact.events().stream().map(e -> e.id).toList());
    }

    @Test
    void mcafee_identity_uses_date_thread_query_and_the_lines_digest() throws IOException {
        Parsed p = parseFixture("mcafee-1.1-audit.json", "mcafee-json");
        AuditEvent header = p.events().get(0);
        assertEquals("header", header.eventName);
        AuditEvent query = p.events().get(2);
        assertTrue(query.recordId.matches("1795338002000-11-3-[0-9a-f]{12}"), query.recordId);
        assertEquals(
                "[{\"db\":\"shop\",\"name\":\"t\",\"obj_type\":\"TABLE\"}]",
                query.extra.get("objects"));
        assertEquals("1", query.extra.get("rows"));
    }

    /** One a line: format|record|reason ("\\n" a line break inside the record). */
    private static final List<String[]> BAD_RECORDS =
            TextTable.rows(
                    """
                    percona-xml|<AUDIT_RECORD\\n  NAME="Query"\\n  TIMESTAMP="2026-11-22T09:00:02 UTC"\\n/>|missing required field 'record'
                    percona-xml|<AUDIT_RECORD\\n  NAME="Query"\\n  RECORD="1_x"\\n  TIMESTAMP="2026-11-22T09:00:02 UTC"\\n  STATUS="zero"\\n/>|field 'status' is not an integer
                    percona-xml|<AUDIT_RECORD>\\n  <NAME>Query</NAME>\\n  <NAME>Quit</NAME>\\n</AUDIT_RECORD>|field 'name' appears twice
                    percona-xml|<AUDIT_RECORD\\n  NAME="Query"|incomplete XML audit record
                    percona-xml|junk\\n<AUDIT_RECORD NAME="Q" RECORD="1" TIMESTAMP="2026-11-22T09:00:02 UTC"/>|unexpected text before <AUDIT_RECORD
                    percona-xml|<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><AUDIT_RECORD NAME="&e;"/>|unexpected text before
                    percona-xml|<AUDIT_RECORD NAME="Q" RECORD="1" TIMESTAMP="2026-11-22T09:00:02 UTC" SQLTEXT="a < b"/>|invalid XML
                    percona-csv|"Query","1_x","2026-11-22T09:00:02 UTC","select","11",0,"unterminated|no closing quote
                    percona-csv|"Query","1_x"|not a Percona CSV audit record: 2 columns
                    mysql-enterprise-json|{ "timestamp": "2026-11-22 09:00:02", "class": "general" }|missing required field 'id'
                    mysql-enterprise-json|{ "timestamp": "2026-11-22 09:00:02", "id": 1, "class": "general" } { "id": 2 }|more than one record
                    mysql-enterprise-json|{ "timestamp": "yesterday", "id": 1, "class": "general" }|timestamp 'yesterday'
                    mcafee-json|{"msg-type":"activity","date":"soon","cmd":"select"}|field 'date' is not epoch milliseconds
                    mcafee-json|{"msg-type":"activity","date":"1795338002000","thread-id":"99999999999999999999","cmd":"select"}|field 'thread-id' is not a number
                    mcafee-json|{"msg-type":"activity","date":"1795338002000","query-id":"99999999999999999999","cmd":"select"}|field 'query-id' is not a number
                    """);

    @Test
    void bad_records_are_dead_letters_with_the_reason() {
        for (String[] c : BAD_RECORDS) {
            String format = c[0], record = c[1], reason = c[2];
            SourceDescriptor source = new SourceDescriptor("db-01", format, "f", "rsyslog");
            ParseResult r = AuditFormats.parse(record.getBytes(StandardCharsets.UTF_8), source);
            assertFalse(r.isOk(), () -> "expected a dead letter for " + record + ", got " + r);
            assertFalse(r.isFraming());
            assertTrue(
                    r.failureReason().contains(reason),
                    () -> "reason '" + r.failureReason() + "' should say: " + reason);
        }
    }

    /** One a line: format|what the file holds besides its records. */
    private static final List<String[]> FRAMING_ONLY =
            TextTable.rows(
                    """
                    percona-xml|</AUDIT>
                    percona-xml|<?xml version="1.0" encoding="UTF-8"?>\\n<AUDIT>
                    mysql-enterprise-json|]
                    mysql-enterprise-json|[
                    """);

    @Test
    void the_files_own_framing_alone_is_neither_an_event_nor_a_dead_letter() {
        for (String[] c : FRAMING_ONLY) {
            ParseResult r =
                    AuditFormats.parse(
                            c[1].getBytes(StandardCharsets.UTF_8),
                            new SourceDescriptor("db-01", c[0], "f", "rsyslog"));
            assertTrue(r.isFraming(), () -> "expected framing for " + c[1] + ", got " + r);
        }
    }

    @Test
    void percona_csv_with_the_older_comma_space_separator_reads_the_same() {
        String line =
                "\"Query\", \"3_2026-11-22T09:00:00\", \"2026-11-22T09:00:02 UTC\", \"select\", \"11\", 0, "
                        + "\"SELECT \"\"a\"\"\", \"app[app] @ localhost [10.0.0.5]\", \"localhost\", \"\", \"10.0.0.5\", \"shop\"";
        ParseResult r =
                AuditFormats.parse(
                        line.getBytes(StandardCharsets.UTF_8),
                        new SourceDescriptor("db-01", "percona-csv", "f", "rsyslog"));
        assertTrue(r.isOk(), r::toString);
        assertEquals("SELECT \"a\"", r.event().sqltext);
        assertEquals("shop", r.event().db);
        assertEquals(0, r.event().status);
    }

    @Test
    void
            a_csv_statement_line_that_reads_like_a_records_end_cuts_it_into_two_dead_letters_not_silence() {
        // the documented limit of framing CSV by its last line (a statement line ending in ",","
        // reads, quotes doubled, like the end of a record): visible, never silent
        String record =
                "\"Query\",\"3_2026-11-22T09:00:00\",\"2026-11-22T09:00:02 UTC\",\"select\",\"11\",0,"
                        + "\"SELECT REPLACE(s, \"\",\"\",\"\"\n\"\";\"\") FROM t\",\"app\",\"h\",\"\",\"10.0.0.5\",\"shop\"";
        // the statement: SELECT REPLACE(s, ",","  /  ";") FROM t
        Framing.Framer f = PerconaCsvParser.FRAMING.framer();
        List<String> parts = new ArrayList<>();
        long n = 0;
        for (String line : record.split("\n")) f.add(line, ++n).forEach(r -> parts.add(r.text));
        assertEquals(2, parts.size(), parts::toString);
        for (String part : parts) {
            ParseResult r =
                    AuditFormats.parse(
                            part.getBytes(StandardCharsets.UTF_8),
                            new SourceDescriptor("db-01", "percona-csv", "f", "rsyslog"));
            assertFalse(r.isOk(), () -> part + " -> " + r);
            assertFalse(r.isFraming());
        }
    }

    @Test
    void
            framing_by_the_last_line_keeps_the_declaration_with_the_first_record_and_a_late_end_alone() {
        Framing.Framer f = AuditXmlParser.FRAMING.framer();
        List<String> out = new ArrayList<>();
        String[] lines = {
            "<?xml version=\"1.0\"?>",
            "<AUDIT>",
            "<AUDIT_RECORD",
            "  NAME=\"x\"",
            "/>",
            "<AUDIT_RECORD>",
            "</AUDIT_RECORD>",
            "</AUDIT>"
        };
        for (int i = 0; i < lines.length; i++)
            f.add(lines[i], i + 1).forEach(r -> out.add(r.firstLine + ":" + r.text));
        List<Framing.Framer.Record> rest = f.finish();
        assertEquals(
                List.of(
                        "1:<?xml version=\"1.0\"?>\n<AUDIT>\n<AUDIT_RECORD\n  NAME=\"x\"\n/>",
                        "6:<AUDIT_RECORD>\n</AUDIT_RECORD>"),
                out);
        assertEquals(1, rest.size());
        assertEquals("</AUDIT>", rest.get(0).text);
    }
}
