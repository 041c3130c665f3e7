package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Cloud SQL for MySQL's audit entries as Cloud Logging exports them (one LogEntry a line, numbers
 * as strings), a long statement's entry split in two parts that are not next to each other in the
 * file, and what a part alone, a batch and entries of other types become.
 */
class CloudSqlMysqlAuditParserTest {
    static final String FIXTURE = "cloudsql-mysql-8.0-data-access.json";

    /** The statement the fixture's split entry was cut from. */
    static final String BIG =
            "INSERT INTO shop.orders (id, note) VALUES "
                    + IntStream.rangeClosed(1, 40)
                            .mapToObj(i -> "(" + i + ", 'order " + i + "')")
                            .collect(Collectors.joining(","));

    private static final SourceDescriptor SOURCE =
            new SourceDescriptor(
                            "db-01",
                            CloudSqlMysqlAuditParser.FORMAT,
                            "export.json",
                            "auditpipe-import")
                    .inZone(java.time.ZoneOffset.UTC);

    @Test
    void anExportReadsAsTheEntriesItHoldsTheSplitOneWhole() throws IOException {
        FormatFixturesTest.Parsed p =
                FormatFixturesTest.parseFixture(FIXTURE, CloudSqlMysqlAuditParser.FORMAT);
        assertEquals(List.of(), p.deadLetters());
        List<AuditEvent> events = p.events();
        assertEquals(
                List.of("Connect", "Query", "Connect", "Query", "Quit"),
                events.stream().map(e -> e.eventName).collect(Collectors.toList()),
                "the split entry comes out with its part 0");
        AuditEvent connect = events.get(0);
        assertEquals(
                Instant.parse("2026-11-20T11:00:01.123Z").toEpochMilli(), connect.eventTimeMillis);
        assertEquals(11L, connect.connectionId);
        assertEquals("app", connect.user);
        assertEquals("app", connect.privUser);
        assertEquals("10.0.0.5", connect.ip);
        assertNull(connect.host, "an empty host is none");
        assertEquals("shop", connect.db);
        assertEquals(0, connect.status);
        assertEquals(AuditEvent.AUTH_SUCCESS, connect.authOutcome);
        assertEquals("shop-prod:mysql-eu-1", connect.extra.get("database_id"));
        assertEquals("activity", connect.extra.get("msgType"));
        assertEquals(
                connect.extra.get("insert_id"),
                connect.recordId,
                "Cloud Logging's own key for the entry");
        AuditEvent select = events.get(1);
        assertEquals(FormatFixturesTest.SQL, select.sqltext);
        assertEquals("select", select.commandClass);
        assertEquals("shop.t", select.extra.get("objects"));
        assertEquals("shop", select.db, "the first object's database");
        AuditEvent failed = events.get(2);
        assertEquals("root", failed.user);
        assertEquals(9426L, failed.connectionId);
        assertEquals(1045, failed.status);
        assertEquals(AuditEvent.AUTH_FAILURE, failed.authOutcome);
        AuditEvent insert = events.get(3);
        assertEquals(BIG, insert.sqltext, "the statement's pieces joined in index order");
        assertEquals("insert", insert.commandClass);
        assertEquals("1764064803500000-7f3a", insert.recordId);
        assertEquals(insert.recordId, insert.extra.get("split_uid"));
        assertEquals("shop.orders", insert.extra.get("objects"));
        assertEquals(
                Instant.parse("2026-11-20T11:00:03.500Z").toEpochMilli(), insert.eventTimeMillis);
        assertNull(events.get(4).authOutcome);
        assertEquals(5, events.stream().map(e -> e.id).distinct().count());
        for (AuditEvent e : events)
            assertFalse(e.extra.containsKey("query"), "read into the statement");
        assertEquals(
                CloudSqlMysqlAuditParser.FORMAT,
                AuditFormats.detect(
                        FormatFixturesTest.class
                                .getResourceAsStream("/fixtures/" + FIXTURE)
                                .readNBytes(3000),
                        false));
    }

    @Test
    void aPartAloneIsADeadLetterNamingItsSplit() throws IOException {
        List<String> lines = fixtureLines();
        String part1 = lines.get(2);
        ParseResult r = AuditFormats.parse(part1.getBytes(StandardCharsets.UTF_8), SOURCE);
        assertFalse(r.isOk());
        assertTrue(
                r.failureReason()
                        .startsWith(
                                "part 2 of 2 of a Cloud Logging entry split in 2 (split.uid 1764064803500000-7f3a)"),
                r.failureReason());
        // a file that holds only one part: handed out at its end, the same reason
        List<Framing.Framer.Record> framed =
                Framing.LINES_JOINING_SPLIT_ENTRIES.records(
                        lines.get(0) + "\n" + part1 + "\n" + lines.get(5));
        assertEquals(
                List.of(1L, 3L, 2L),
                framed.stream().map(f -> f.firstLine).collect(Collectors.toList()));
        assertFalse(
                AuditFormats.parse(framed.get(2).text.getBytes(StandardCharsets.UTF_8), SOURCE)
                        .isOk());
    }

    @Test
    void partsOfDifferentEntriesOrTooFewAreNamed() throws IOException {
        List<String> lines = fixtureLines();
        String other = lines.get(4).replace("1764064803500000-7f3a", "another-uid");
        assertEquals(
                "lines of different entries in one record (split.uid 1764064803500000-7f3a and another-uid)",
                reason(lines.get(2) + "\n" + other));
        assertEquals(
                "split entry 1764064803500000-7f3a: part 2 twice",
                reason(lines.get(2) + "\n" + lines.get(2)));
        String three = lines.get(2).replace("\"totalSplits\":2", "\"totalSplits\":3");
        String threeToo = lines.get(4).replace("\"totalSplits\":2", "\"totalSplits\":3");
        assertEquals(
                "split entry 1764064803500000-7f3a: 2 of its 3 parts",
                reason(three + "\n" + threeToo));
    }

    @Test
    void partsAwaitingTheirOthersAreBoundedInEntriesAndCharacters() throws IOException {
        String part = fixtureLines().get(2); // part 2 of 2 of one entry
        String other = part.replace("1764064803500000-7f3a", "another-uid");
        CloudSqlMysqlAuditParser.SplitParts byCount =
                new CloudSqlMysqlAuditParser.SplitParts(1, Long.MAX_VALUE);
        assertEquals(List.of(), byCount.add(part, 1));
        assertEquals(
                List.of(new CloudSqlMysqlAuditParser.SplitParts.Out(part, 1)),
                byCount.add(other, 2),
                "the oldest makes room");
        assertEquals(
                List.of(new CloudSqlMysqlAuditParser.SplitParts.Out(other, 2)), byCount.finish());
        CloudSqlMysqlAuditParser.SplitParts byChars =
                new CloudSqlMysqlAuditParser.SplitParts(1024, part.length() + 10);
        assertEquals(List.of(), byChars.add(part, 1));
        assertEquals(
                List.of(new CloudSqlMysqlAuditParser.SplitParts.Out(part, 1)),
                byChars.add(other, 2));
        assertEquals(
                List.of(),
                byChars.add("{\"not\":\"a part\"}", 3).stream()
                        .filter(o -> o.firstLine() != 3)
                        .toList());
        assertEquals(1, byChars.finish().size());
    }

    @Test
    void listsAreJoinedElementByElement() {
        // Cloud Logging's own example of a list cut in two: ["foo", "ba"] and ["", "r", "baz"]
        assertEquals(
                List.of("foo", "bar", "baz"),
                CloudSqlMysqlAuditParser.merge(List.of("foo", "ba"), List.of("", "r", "baz")));
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "{\"protoPayload\":{\"request\":{\"@type\":\"type.googleapis.com/google.cloud.sql.audit.v1.PgAuditEntry\",\"cmd\":\"x\"}}}"
                        + "|protoPayload.request is a 'type.googleapis.com/google.cloud.sql.audit.v1.PgAuditEntry', not a google.cloud.sql.audit.v1.MysqlAuditEntry",
                "{\"protoPayload\":{\"request\":{\"@type\":\"google.cloud.sql.audit.v1.MysqlAuditEntry\",\"date\":\"2026-11-20T11:00:01Z\"}}}"
                        + "|missing required field 'protoPayload.request.cmd'",
                "{\"protoPayload\":{\"request\":{\"@type\":\"google.cloud.sql.audit.v1.MysqlAuditEntry\",\"cmd\":\"select\",\"threadId\":\"t1\",\"date\":\"2026-11-20T11:00:01Z\"}}}"
                        + "|field 'threadId' is not a number: 't1'",
                "{\"protoPayload\":{\"request\":{\"@type\":\"google.cloud.sql.audit.v1.MysqlAuditEntry\",\"cmd\":\"select\"}}}"
                        + "|missing required field 'protoPayload.request.date' (or 'timestamp')",
                "{\"entries\":[{\"insertId\":\"1\"}]}|a batch of entries ('entries' array): one LogEntry a line is read; write each element on a line of its own",
                "{\"textPayload\":\"x\"}|missing required field 'protoPayload' (a Cloud Logging audit entry)",
                "[1]|not a JSON object",
            })
    void badEntriesSayWhatIsWrong(String line, String expected) {
        assertEquals(expected, reason(line));
    }

    @Test
    void deepNestingIsRefusedNotRecursedInto() {
        String deep = "{\"a\":".repeat(200) + "1" + "}".repeat(200);
        assertTrue(reason(deep).contains("nested deeper than"), reason(deep));
    }

    private static String reason(String record) {
        ParseResult r = AuditFormats.parse(record.getBytes(StandardCharsets.UTF_8), SOURCE);
        assertFalse(r.isOk(), record);
        return r.failureReason();
    }

    private static List<String> fixtureLines() throws IOException {
        try (var in = FormatFixturesTest.class.getResourceAsStream("/fixtures/" + FIXTURE)) {
            return new ArrayList<>(
                    List.of(new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")));
        }
    }
}
