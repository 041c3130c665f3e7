package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/** A dead letter's record id, read where each Percona format writes it and nowhere else. */
class RecordNumbersTest {
    private static RecordNumbers.Numbered in(String line) {
        return RecordNumbers.inLine(line.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theIdIsReadInEachFormatsPlaceOfABrokenLine() {
        RecordNumbers.Numbered want = new RecordNumbers.Numbered(105, "2026-11-22T09:00:00");
        assertEquals(
                want,
                in(
                        "{\"audit_record\":{\"name\":\"Query\",\"record\":\"105_2026-11-22T09:00:00\",\"timestamp\":\"2026-11-2"));
        assertEquals(
                want,
                in(
                        "<AUDIT_RECORD>\n  <NAME>Query</NAME>\n  <RECORD_ID>105_2026-11-22T09:00:00</RECORD_ID>\n  <TIMES"));
        assertEquals(
                want,
                in(
                        "<AUDIT_RECORD\n  NAME=\"Query\"\n  RECORD=\"105_2026-11-22T09:00:00\"\n  TIMESTAMP=\"2026-11-22T09"));
        assertEquals(
                want,
                in(
                        "\"Query\",\"105_2026-11-22T09:00:00\",\"2026-11-22T09:00:02 UTC\",\"select\",\"11\",0,\"SELECT \"\"a"));
    }

    @Test
    void anIdQuotedAnywhereElseIsNoneAndNeitherIsTheSyslogHandlers() {
        assertNull(
                in(
                        "{\"audit_record\":{\"name\":\"Query\",\"sqltext\":\"SELECT '\\\"record\\\":\\\"7_2026-11-22T09:00:00'\"}"),
                "an escaped quote inside a statement is not the field");
        assertNull(in("\"Query\",\"x\",\"105_2026-11-22T09:00:00\""), "the CSV's third field");
        assertNull(
                in("{\"audit_record\":{\"name\":\"Query\",\"record\":\"105_1970-01-01T00:00:00\"}"),
                "the syslog handler's numbers start again with every server start");
        assertNull(
                in("{\"audit_record\":{\"name\":\"Query\",\"record\":\"105_2026-11-22\"}"),
                "cut before its time ends");
        assertNull(
                in(
                        "{\"audit_record\":{\"name\":\"Query\",\"record\":\"1234567890123456789_2026-11-22T09:00:00\"}"),
                "more digits than a number holds");
        assertNull(
                in("x".repeat(RecordNumbers.LINE_HEAD) + "\"record\":\"105_2026-11-22T09:00:00\""),
                "beyond the head of the line");
        assertNull(RecordNumbers.inLine(null));
    }

    @Property
    void anyBytesAreReadWithoutFailing(@ForAll byte[] line) {
        RecordNumbers.Numbered n = RecordNumbers.inLine(line);
        if (n != null) assertEquals(19, n.startup().length());
    }
}
