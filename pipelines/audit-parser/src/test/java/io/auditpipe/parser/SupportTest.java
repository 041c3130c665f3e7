package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Event ids, source keys, timestamps, UTF-8 and account strings. */
class SupportTest {
    @Test
    void eventIdIsServerSlashRecord() {
        assertEquals(
                "db-01/17_2026-11-22T09:00:00",
                EventIds.eventId("db-01", "17_2026-11-22T09:00:00"));
    }

    @Test
    void eventIdIsDeterministicAndDistinguishesServers() {
        assertEquals(EventIds.eventId("a", "1_x"), EventIds.eventId("a", "1_x"));
        assertTrue(!EventIds.eventId("a", "1_x").equals(EventIds.eventId("b", "1_x")));
    }

    @Test
    void eventIdNeedsBothParts() {
        assertThrows(IllegalArgumentException.class, () -> EventIds.eventId("", "1_x"));
        assertThrows(IllegalArgumentException.class, () -> EventIds.eventId("a", null));
    }

    @Test
    void sourceKeyParses() {
        SourceDescriptor d =
                SourceDescriptor.parseKey(
                        bytes(
                                "{\"v\":1,\"server\":\"db-01\",\"format\":\"percona-json\",\"source\":\"/a/audit.log\",\"collector\":\"rsyslog\",\"future\":[1]}"));
        assertEquals(new SourceDescriptor("db-01", "percona-json", "/a/audit.log", "rsyslog"), d);
    }

    @Test
    void badSourceKeysAreRejectedWithReasons() {
        assertEquals("message has no key; expected the source descriptor JSON", keyError(null));
        assertEquals(
                "message key has no 'server'", keyError("{\"v\":1,\"format\":\"percona-json\"}"));
        assertEquals("message key has no 'format'", keyError("{\"v\":1,\"server\":\"a\"}"));
        assertTrue(
                keyError("{\"v\":2,\"server\":\"a\",\"format\":\"f\"}")
                        .contains("version 2 is not supported"));
        assertTrue(keyError("db-01").startsWith("message key is not valid JSON"));
        assertEquals("message key is not a JSON object", keyError("[]"));
        assertEquals(
                "message key field 'server' is not a string",
                keyError("{\"v\":1,\"server\":3,\"format\":\"f\"}"));
        assertEquals(
                "message key field 'lost' is not an object",
                keyError("{\"v\":1,\"server\":\"a\",\"format\":\"f\",\"lost\":1}"));
        assertEquals(
                "message key field 'lost' has no 'problem'",
                keyError("{\"v\":1,\"server\":\"a\",\"format\":\"f\",\"lost\":{}}"));
    }

    @Test
    void aReportOfLostLinesSaysWhyAndFromWhere() {
        SourceDescriptor d =
                SourceDescriptor.parseKey(
                        bytes(
                                "{\"v\":1,\"server\":\"db-01\",\"format\":\"percona-json\","
                                        + "\"lost\":{\"problem\":\"rotated-away\",\"file\":\"/a/audit.log.02\"}}"));
        assertEquals(SourceDescriptor.LostLines.ROTATED_AWAY, d.lost().problem());
        assertTrue(
                d.lost().describe().contains("rotated away from the disk while it was down"),
                d.lost().describe());
        assertTrue(
                d.lost().describe().endsWith("shipping went on from the start of /a/audit.log.02"),
                d.lost().describe());
        assertEquals(
                null,
                SourceDescriptor.parseKey(bytes("{\"v\":1,\"server\":\"a\",\"format\":\"f\"}"))
                        .lost());
    }

    private static String keyError(String key) {
        return assertThrows(
                        SourceDescriptor.InvalidSourceKeyException.class,
                        () -> SourceDescriptor.parseKey(key == null ? null : bytes(key)))
                .getMessage();
    }

    @Test
    void timestampsInEveryShapeAreUtc() {
        long t = 1795860930000L; // 2026-11-28T10:15:30Z
        assertEquals(t, AuditTimestamps.parseEpochMillis("2026-11-28T10:15:30 UTC"));
        assertEquals(t, AuditTimestamps.parseEpochMillis("2026-11-28T10:15:30Z"));
        assertEquals(t, AuditTimestamps.parseEpochMillis("2026-11-28 10:15:30"));
        assertEquals(t, AuditTimestamps.parseEpochMillis("2026-11-28T12:15:30+02:00"));
        assertEquals(t + 250, AuditTimestamps.parseEpochMillis("2026-11-28T10:15:30.250Z"));
        assertThrows(
                IllegalArgumentException.class,
                () -> AuditTimestamps.parseEpochMillis("28/11/2026"));
        assertThrows(IllegalArgumentException.class, () -> AuditTimestamps.parseEpochMillis(""));
    }

    @Test
    void utf8Validation() {
        assertEquals(-1, Utf8.firstInvalidByte(bytes("plain ascii")));
        assertEquals(-1, Utf8.firstInvalidByte(bytes("Grüße 日本 🎉")));
        assertEquals(2, Utf8.firstInvalidByte(new byte[] {'a', 'b', (byte) 0xff}));
        assertEquals(0, Utf8.firstInvalidByte(new byte[] {(byte) 0xc0, (byte) 0x80}), "overlong");
        assertEquals(
                0,
                Utf8.firstInvalidByte(new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80}),
                "surrogate");
        assertEquals(
                1,
                Utf8.firstInvalidByte(new byte[] {'a', (byte) 0xe6, (byte) 0x97}),
                "truncated at the end");
        assertEquals(
                0,
                Utf8.firstInvalidByte(
                        new byte[] {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80}),
                "above U+10FFFF");
    }

    @Test
    void accountStrings() {
        MysqlAccount a = MysqlAccount.parse("root[root] @ localhost [127.0.0.1]");
        assertEquals("root", a.user());
        assertEquals("root", a.privUser());
        assertEquals("localhost", a.host());
        assertEquals("127.0.0.1", a.ip());
        MysqlAccount noHost = MysqlAccount.parse("app[app] @  [10.0.0.5]");
        assertEquals("", noHost.host());
        assertEquals("10.0.0.5", noHost.ip());
        assertNull(MysqlAccount.parse("root"));
        assertNull(MysqlAccount.parse(null));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
